// What the client scripts node/client.mjs (SDK for 2025-11-25) and node0326/client.mjs (SDK for
// 2025-03-26) share: reading the scenario and the SDK's place from argv and the environment,
// the HTTP exchanges each step records, and the loop that runs the steps and prints one JSON
// line per step. Each script keeps what its SDK release does differently.
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

// usage reports a usage error and exits with status 2.
export function usage(msg) {
  console.error(`legacyclient: ${msg}`);
  process.exit(2);
}

// loadScenario reads the scenario (argv[2]), LEGACY_CLIENT_SDK and LEGACY_CLIENT_TOKEN, and loads
// the SDK's Client and StreamableHTTPClientTransport, which every release names alike (sdk loads
// what a script uses of its own release). The SDK is resolved from its install directory, not
// from the script's, so the scripts live in the repository while the packages live in the cache.
export function loadScenario() {
  const sdkDir = process.env.LEGACY_CLIENT_SDK;
  if (!sdkDir) usage('LEGACY_CLIENT_SDK is not set');
  let scenario;
  try {
    scenario = JSON.parse(process.argv[2] ?? '');
  } catch (e) {
    usage(`scenario is not JSON: ${e.message}`);
  }
  if (!scenario.url) usage('scenario.url is required');
  const require = createRequire(resolve(sdkDir, 'package.json'));
  const sdk = (p) => require(join('@modelcontextprotocol/sdk', p));
  return {
    scenario,
    sdk,
    Client: sdk('client/index.js').Client,
    StreamableHTTPClientTransport: sdk('client/streamableHttp.js').StreamableHTTPClientTransport,
    timeout: scenario.timeoutMs ?? 15000,
    tools: scenario.tools ?? {},
    token: process.env.LEGACY_CLIENT_TOKEN ?? '',
  };
}

// exchanges records the HTTP exchanges of the current step, so each step can report where its
// requests landed (the X-Served-By header a balancer adds).
export const exchanges = {
  list: [],
  add(init, res) {
    this.list.push({
      method: init?.method ?? 'GET',
      status: res.status,
      servedBy: res.headers.get('x-served-by') ?? undefined,
    });
  },
  take() {
    const l = this.list;
    this.list = [];
    return l;
  },
};

export function textOf(result) {
  return (result.content ?? []).map((c) => c.text ?? '').join('');
}

export async function paged(list, key) {
  const out = [];
  let cursor;
  do {
    const page = await list(cursor ? { cursor } : {});
    out.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

// sharedSteps are the steps whose calls both SDK releases make alike: listing prompts, resources
// and templates (every page), getting the scenario's prompt, and reading the first listed
// resource whose URI contains scenario.resource (found in the step's own listing).
export function sharedSteps(client, scenario, opts) {
  const names = async (method, key, name) => (await paged((p) => client[method](p, opts), key)).map(name);
  return {
    async list_prompts() {
      return { names: await names('listPrompts', 'prompts', (p) => p.name) };
    },
    async list_resources() {
      return { names: await names('listResources', 'resources', (r) => r.uri) };
    },
    async list_resource_templates() {
      return { names: await names('listResourceTemplates', 'resourceTemplates', (r) => r.uriTemplate) };
    },
    async get_prompt() {
      const r = await client.getPrompt({ name: scenario.prompt, arguments: { name: 'Ada' } }, opts);
      return { messages: r.messages.map((m) => m.content.text ?? '') };
    },
    async read_resource() {
      const all = await paged((p) => client.listResources(p, opts), 'resources');
      const match = all.find((r) => r.uri.includes(scenario.resource ?? ''));
      if (!match) throw new Error(`no listed resource URI contains ${JSON.stringify(scenario.resource)}`);
      const r = await client.readResource({ uri: match.uri }, opts);
      return { uri: match.uri, contents: r.contents.map((c) => ({ uri: c.uri, text: c.text })) };
    },
  };
}

// runSteps runs the named steps in order and prints one line per step: {"step", "ok", ...what
// the step saw, ...extra()} or {"step", "ok": false, "error"}, with the step's HTTP exchanges as
// "http"; reset is called before each step. Then it closes the client and exits: 0 when every
// step completed, 1 when one threw.
export async function runSteps(names, steps, client, { reset = () => {}, extra = () => ({}) } = {}) {
  let failed = false;
  for (const name of names) {
    const step = steps[name];
    if (!step) usage(`unknown step ${name}`);
    exchanges.take();
    reset();
    let line;
    try {
      line = { step: name, ok: true, ...(await step()) };
    } catch (e) {
      failed = true;
      line = { step: name, ok: false, error: String(e?.message ?? e) };
    }
    Object.assign(line, extra());
    line.http = exchanges.take();
    console.log(JSON.stringify(line));
    // Without a session nothing else can work; say so once instead of once per step.
    if (name === 'connect' && !line.ok) break;
  }
  await client.close().catch(() => {});
  process.exit(failed ? 1 : 0);
}
