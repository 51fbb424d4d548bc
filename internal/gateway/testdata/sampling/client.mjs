// A TypeScript SDK v1 client (2025-11-25) for the gateway's sampling-context tests: it declares
// sampling with context, answers every sampling request with the text "ok", and records the
// includeContext each one asked with.
//
// usage: node client.mjs '{"url": "...", "calls": [{"tool": "...", "context": "..."}]}'
//
//   LEGACY_CLIENT_SDK  directory holding node_modules/@modelcontextprotocol/sdk (required)
//
// It prints one JSON line per call: {"tool", "text", "seen"}, seen the includeContext values
// (null when absent) of the sampling requests made during that call. Exit status 1 on an error.
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const sdkDir = process.env.LEGACY_CLIENT_SDK;
const scenario = JSON.parse(process.argv[2] ?? '{}');
if (!sdkDir || !scenario.url) {
  console.error('usage: LEGACY_CLIENT_SDK=dir node client.mjs SCENARIO_JSON');
  process.exit(2);
}
const require = createRequire(resolve(sdkDir, 'package.json'));
const sdk = (p) => require(join('@modelcontextprotocol/sdk', p));
const { Client } = sdk('client/index.js');
const { StreamableHTTPClientTransport } = sdk('client/streamableHttp.js');
const { CreateMessageRequestSchema } = sdk('types.js');

let seen = [];
const client = new Client({ name: 'sampling-context-test', version: '1' }, { capabilities: { sampling: { context: {} } } });
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  seen.push(req.params.includeContext ?? null);
  return { model: 'm', role: 'assistant', content: { type: 'text', text: 'ok' } };
});

try {
  await client.connect(new StreamableHTTPClientTransport(new URL(scenario.url)));
  for (const call of scenario.calls ?? []) {
    seen = [];
    const res = await client.callTool({ name: call.tool, arguments: { context: call.context } }, undefined, { timeout: 30000 });
    const text = (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
    console.log(JSON.stringify({ tool: call.tool, text, seen }));
  }
  await client.close();
} catch (e) {
  console.log(JSON.stringify({ tool: 'error', text: String(e?.message ?? e), seen: [] }));
  process.exit(1);
}
