// A 2025-03-26 MCP client for the gateway's tests: the TypeScript SDK's last release whose
// latest protocol version is 2025-03-26 (1.12.3, pinned in package.json and package-lock.json,
// installed by .ci/setup), over Streamable HTTP. It runs one scenario against one MCP endpoint
// and prints one JSON line per step, as ../node/client.mjs does for the 2025-11-25 SDK.
//
// usage: node client.mjs SCENARIO_JSON
//
//   LEGACY_CLIENT_SDK    directory holding node_modules/@modelcontextprotocol/sdk (required)
//   LEGACY_CLIENT_TOKEN  bearer token sent on every request (optional; kept out of argv)
//
// The scenario is a JSON object:
//
//   url        the MCP endpoint
//   steps      step names to run, in order (default: all of them, see STEPS)
//   tools      {echo, progress, add, confirm, denied}: the names to call for those steps
//   prompt     the prompt to get (with the argument name=Ada)
//   resource   a substring of the URI to read, matched against resources/list
//   timeoutMs  bound on each request (default 15000)
//
// The batch step sends one JSON-RPC batch through the SDK's transport (which the SDK's Client
// never does itself, but its transport takes): two calls of echo, a call of the denied tool, a
// ping and a notification, and reports each response by id.
import { exchanges, loadScenario, paged, runSteps, sharedSteps, textOf } from '../steps.mjs';

const STEPS = [
  'connect',
  'list_tools',
  'list_prompts',
  'list_resources',
  'list_resource_templates',
  'call_tool',
  'structured',
  'get_prompt',
  'read_resource',
  'progress',
  'confirm',
  'batch',
  'close',
];

const { scenario, sdk, timeout, tools, token, Client, StreamableHTTPClientTransport } = loadScenario();
const { LATEST_PROTOCOL_VERSION } = sdk('types.js');

// The protocol version the server answered initialize with (this SDK release does not keep it).
let negotiated;
// This SDK release calls the global fetch (it takes no fetch option), so the global is wrapped.
const realFetch = globalThis.fetch;
async function recordingFetch(url, init) {
  const res = await realFetch(url, init);
  exchanges.add(init, res);
  if (typeof init?.body === 'string' && init.body.includes('"method":"initialize"') && res.ok) {
    // A JSON answer, or the first event of a stream: read from a copy, without waiting for
    // the end of a stream.
    const reader = res.clone().body.getReader();
    const { value } = await reader.read();
    reader.cancel().catch(() => {});
    negotiated = /"protocolVersion":"([^"]+)"/.exec(new TextDecoder().decode(value ?? new Uint8Array()))?.[1];
  }
  return res;
}
globalThis.fetch = recordingFetch;

const client = new Client({ name: 'legacy-client-0326-test', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(scenario.url), {
  requestInit: { headers },
  reconnectionOptions: { maxReconnectionDelay: 1000, initialReconnectionDelay: 100, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
});
const opts = { timeout };

// Members of a listed tool that 2025-03-26 does not define.
const TOOL_MEMBERS = new Set(['name', 'description', 'inputSchema', 'annotations']);

function callSummary(result) {
  return { isError: result.isError === true, text: textOf(result), structured: result.structuredContent !== undefined };
}

// batch sends one JSON-RPC batch and waits for the response of each of its requests.
async function batch() {
  const msgs = [
    { jsonrpc: '2.0', id: 'b1', method: 'tools/call', params: { name: tools.echo, arguments: { text: 'batch one' } } },
    { jsonrpc: '2.0', id: 'b2', method: 'tools/call', params: { name: tools.echo, arguments: { text: 'batch two' } } },
    { jsonrpc: '2.0', id: 'b3', method: 'tools/call', params: { name: tools.denied ?? 'nope', arguments: {} } },
    { jsonrpc: '2.0', id: 'b4', method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
  ];
  const want = new Set(['b1', 'b2', 'b3', 'b4']);
  const got = {};
  const inner = transport.onmessage;
  let done;
  const all = new Promise((res) => (done = res));
  transport.onmessage = (m) => {
    if (want.has(m.id)) {
      got[m.id] = m.error ? { error: m.error } : { result: m.result };
      if (Object.keys(got).length === want.size) done();
      return;
    }
    inner?.(m);
  };
  try {
    await transport.send(msgs);
    await Promise.race([all, new Promise((_, rej) => setTimeout(() => rej(new Error(`batch: ${Object.keys(got).length} of ${want.size} responses`)), timeout))]);
  } finally {
    transport.onmessage = inner;
  }
  return { batch: got };
}

const steps = {
  ...sharedSteps(client, scenario, opts),
  async connect() {
    await client.connect(transport, opts);
    return { protocolVersion: negotiated, session: Boolean(transport.sessionId), sdkLatest: LATEST_PROTOCOL_VERSION };
  },
  async list_tools() {
    const list = await paged((p) => client.listTools(p, opts), 'tools');
    const extras = [...new Set(list.flatMap((t) => Object.keys(t).filter((k) => !TOOL_MEMBERS.has(k))))];
    return { names: list.map((t) => t.name), extras };
  },
  async call_tool() {
    return callSummary(await client.callTool({ name: tools.echo, arguments: { text: 'hello legacy' } }, undefined, opts));
  },
  async structured() {
    return callSummary(await client.callTool({ name: tools.add, arguments: { a: 2, b: 3 } }, undefined, opts));
  },
  async progress() {
    const seen = [];
    const r = await client.callTool({ name: tools.progress, arguments: { steps: 3 } }, undefined, { ...opts, onprogress: (p) => seen.push(p.progress) });
    return { ...callSummary(r), progress: seen };
  },
  async confirm() {
    return callSummary(await client.callTool({ name: tools.confirm, arguments: { text: 'approved' } }, undefined, opts));
  },
  batch,
  async close() {
    await client.close();
    return {};
  },
};

await runSteps(scenario.steps ?? STEPS, steps, client);
