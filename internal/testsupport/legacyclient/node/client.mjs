// A pre-2026 MCP client for the gateway's tests: the official TypeScript SDK v1 (pinned in
// package.json and package-lock.json, installed by .ci/setup), which speaks 2025-11-25 only, over
// Streamable HTTP. It runs one scenario against one MCP endpoint and prints one JSON line per step
// with what it got, so a Go test can assert each step.
//
// usage: node client.mjs SCENARIO_JSON
//
//   LEGACY_CLIENT_SDK  directory holding node_modules/@modelcontextprotocol/sdk (required)
//   LEGACY_CLIENT_TOKEN  bearer token sent on every request (optional; kept out of argv)
//
// The scenario is a JSON object:
//
//   url          the MCP endpoint
//   steps        step names to run, in order (default: all of them, see STEPS)
//   tools        {echo, progress, ask, confirm}: the names to call for those steps
//   prompt       the prompt to get (with the argument name=Ada)
//   resource     a substring of the URI to read, matched against resources/list
//   timeoutMs    bound on each request (default 15000)
//   arguments    {step: arguments}: the tool arguments of call_tool, progress, elicitation,
//                confirm_approve and confirm_decline instead of the defaults (for targets
//                whose tools are not the test backends')
//
// Each output line is {"step", "ok", ...what the step saw} or {"step", "ok": false, "error"};
// every line also lists the HTTP exchanges of the step (status and the X-Served-By header a
// balancer adds) as "http". The exit status is 0 when every step completed (a tool result with
// isError still completes), 1 when one threw, 2 on a usage error.
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const STEPS = [
  'connect',
  'list_tools',
  'list_prompts',
  'list_resources',
  'list_resource_templates',
  'call_tool',
  'get_prompt',
  'read_resource',
  'progress',
  'elicitation',
  'confirm_approve',
  'confirm_decline',
  'close',
];

function usage(msg) {
  console.error(`legacyclient: ${msg}`);
  process.exit(2);
}

const sdkDir = process.env.LEGACY_CLIENT_SDK;
if (!sdkDir) usage('LEGACY_CLIENT_SDK is not set');
let scenario;
try {
  scenario = JSON.parse(process.argv[2] ?? '');
} catch (e) {
  usage(`scenario is not JSON: ${e.message}`);
}
if (!scenario.url) usage('scenario.url is required');

// The SDK is resolved from its install directory, not from this file's, so the script can live
// in the repository while the packages live in the cache.
const require = createRequire(resolve(sdkDir, 'package.json'));
const sdk = (p) => require(join('@modelcontextprotocol/sdk', p));
const { Client } = sdk('client/index.js');
const { StreamableHTTPClientTransport } = sdk('client/streamableHttp.js');
const { ElicitRequestSchema } = sdk('types.js');

const timeout = scenario.timeoutMs ?? 15000;
const tools = scenario.tools ?? {};
const args = (step, dflt) => scenario.arguments?.[step] ?? dflt;
const token = process.env.LEGACY_CLIENT_TOKEN ?? '';

// Every HTTP exchange, so each step can report where its requests landed.
let exchanges = [];
async function recordingFetch(url, init) {
  const res = await fetch(url, init);
  exchanges.push({
    method: init?.method ?? 'GET',
    status: res.status,
    servedBy: res.headers.get('x-served-by') ?? undefined,
  });
  return res;
}

// What the elicitation handler answers in the current step, and what it was asked.
let answer = { action: 'decline' };
let elicited = [];

const client = new Client(
  { name: 'legacy-client-test', version: '1.0.0' },
  // An empty elicitation object is what most 2025 clients declare (form mode).
  { capabilities: { elicitation: {} } },
);
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  const props = req.params.requestedSchema?.properties ?? {};
  elicited.push({
    message: req.params.message,
    mode: req.params.mode,
    properties: Object.fromEntries(Object.entries(props).map(([k, v]) => [k, v.type])),
  });
  return answer;
});

const headers = token ? { Authorization: `Bearer ${token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(scenario.url), {
  requestInit: { headers },
  fetch: recordingFetch,
  // A failed stream must fail the step, not be retried behind the test's back.
  reconnectionOptions: {
    maxReconnectionDelay: 1000,
    initialReconnectionDelay: 100,
    reconnectionDelayGrowFactor: 1,
    maxRetries: 0,
  },
});
const opts = { timeout };

const REQUIRED_SCOPES = 'io.mcp-gateway/requiredScopes';

function textOf(result) {
  return (result.content ?? []).map((c) => c.text ?? '').join('');
}

function callSummary(result) {
  return { isError: result.isError === true, text: textOf(result), structured: result.structuredContent };
}

async function paged(list, key) {
  const out = [];
  let cursor;
  do {
    const page = await list(cursor ? { cursor } : {});
    out.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

const steps = {
  async connect() {
    await client.connect(transport, opts);
    return {
      protocolVersion: transport.protocolVersion,
      session: Boolean(transport.sessionId),
      server: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
    };
  },
  async list_tools() {
    const list = await paged((p) => client.listTools(p, opts), 'tools');
    // The scopes the gateway marks a listed tool with when a call would need more.
    const marked = list.filter((t) => t._meta?.[REQUIRED_SCOPES]);
    return {
      names: list.map((t) => t.name),
      requiredScopes: Object.fromEntries(marked.map((t) => [t.name, t._meta[REQUIRED_SCOPES]])),
    };
  },
  async list_prompts() {
    const list = await paged((p) => client.listPrompts(p, opts), 'prompts');
    return { names: list.map((p) => p.name) };
  },
  async list_resources() {
    const list = await paged((p) => client.listResources(p, opts), 'resources');
    return { names: list.map((r) => r.uri) };
  },
  async list_resource_templates() {
    const list = await paged((p) => client.listResourceTemplates(p, opts), 'resourceTemplates');
    return { names: list.map((r) => r.uriTemplate) };
  },
  async call_tool() {
    const r = await client.callTool({ name: tools.echo, arguments: args('call_tool', { text: 'hello legacy' }) }, undefined, opts);
    return callSummary(r);
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
  async progress() {
    const seen = [];
    const r = await client.callTool({ name: tools.progress, arguments: args('progress', { steps: 3 }) }, undefined, {
      ...opts,
      onprogress: (p) => seen.push(p.progress),
    });
    return { ...callSummary(r), progress: seen };
  },
  async elicitation() {
    answer = { action: 'accept', content: { name: 'Ada' } };
    const r = await client.callTool({ name: tools.ask, arguments: args('elicitation', {}) }, undefined, opts);
    return callSummary(r);
  },
  async confirm_approve() {
    answer = { action: 'accept', content: { approve: true } };
    const r = await client.callTool({ name: tools.confirm, arguments: args('confirm_approve', { text: 'approved' }) }, undefined, opts);
    return callSummary(r);
  },
  async confirm_decline() {
    answer = { action: 'accept', content: { approve: false } };
    const r = await client.callTool({ name: tools.confirm, arguments: args('confirm_decline', { text: 'declined' }) }, undefined, opts);
    return callSummary(r);
  },
  async close() {
    await client.close();
    return {};
  },
};

let failed = false;
for (const name of scenario.steps ?? STEPS) {
  const step = steps[name];
  if (!step) usage(`unknown step ${name}`);
  exchanges = [];
  elicited = [];
  answer = { action: 'decline' };
  let line;
  try {
    line = { step: name, ok: true, ...(await step()) };
  } catch (e) {
    failed = true;
    line = { step: name, ok: false, error: String(e?.message ?? e) };
  }
  line.elicited = elicited;
  line.http = exchanges;
  console.log(JSON.stringify(line));
  // Without a session nothing else can work; say so once instead of once per step.
  if (name === 'connect' && !line.ok) break;
}
await client.close().catch(() => {});
process.exit(failed ? 1 : 0);
