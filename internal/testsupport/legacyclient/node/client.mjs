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
//   tools        {echo, progress, ask, confirm, rounds}: the names to call for those steps
//                (rounds_N calls rounds asking for N rounds of input)
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
import { exchanges, loadScenario, paged, runSteps, sharedSteps, textOf } from '../steps.mjs';

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
  'rounds_1',
  'rounds_2',
  'rounds_3',
  'close',
];

const { scenario, sdk, timeout, tools, token, Client, StreamableHTTPClientTransport } = loadScenario();
const { ElicitRequestSchema } = sdk('types.js');

const args = (step, dflt) => scenario.arguments?.[step] ?? dflt;

// Every HTTP exchange is recorded, so each step can report where its requests landed.
async function recordingFetch(url, init) {
  const res = await fetch(url, init);
  exchanges.add(init, res);
  return res;
}

// What the elicitation handler answers in the current step, and what it was asked. 'asked'
// answers each request as it asks: approve true, name Ada.
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
  if (answer === 'asked') {
    const content = {};
    if ('approve' in props) content.approve = true;
    if ('name' in props) content.name = 'Ada';
    return { action: 'accept', content };
  }
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

function callSummary(result) {
  return { isError: result.isError === true, text: textOf(result), structured: result.structuredContent !== undefined };
}

const steps = {
  ...sharedSteps(client, scenario, opts),
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
  async call_tool() {
    const r = await client.callTool({ name: tools.echo, arguments: args('call_tool', { text: 'hello legacy' }) }, undefined, opts);
    return callSummary(r);
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
  rounds_1: () => rounds(1),
  rounds_2: () => rounds(2),
  rounds_3: () => rounds(3),
  async close() {
    await client.close();
    return {};
  },
};

async function rounds(n) {
  answer = 'asked';
  const r = await client.callTool({ name: tools.rounds, arguments: { rounds: n } }, undefined, opts);
  return callSummary(r);
}

await runSteps(scenario.steps ?? STEPS, steps, client, {
  reset() {
    elicited = [];
    answer = { action: 'decline' };
  },
  extra: () => ({ elicited }),
});
