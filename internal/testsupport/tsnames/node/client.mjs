// The TypeScript SDK v2 client at 2026-07-28: lists what the server offers and calls each tool,
// gets each prompt and reads each resource named in a JSON file, printing one JSON object.
//
//   node client.mjs <url> <names.json>
//
// names.json is {"tools":[...],"prompts":[...],"resources":[...],"listen":[...]}: with listen, the
// client then listens to those resource URIs until it has heard of each URI the acknowledgement
// names ("honored"; what it heard is "updates"). The output is
// {"tools":[listed names],"prompts":[...],"resources":[listed URIs],
//  "calls":[{"kind":"tool","name":...,"text":...} or {..., "error":...}], "sent":[Mcp-Name values]}.
import { readFileSync } from "node:fs";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, file] = process.argv.slice(2);
const want = JSON.parse(readFileSync(file, "utf8"));
const sent = [];
const fetchSpy = async (input, init) => {
  const h = new Headers(init?.headers);
  if (h.has("mcp-name")) sent.push(h.get("mcp-name"));
  return fetch(input, init);
};
const client = new Client({ name: "tsnames-client", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchSpy }));
const out = { tools: [], prompts: [], resources: [], calls: [], sent };
out.tools = (await client.listTools()).tools.map((t) => t.name);
out.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
out.resources = (await client.listResources()).resources.map((r) => r.uri);
const text = (c) => c?.text ?? c?.content?.text;
for (const name of want.tools ?? []) {
  try {
    const r = await client.callTool({ name, arguments: {} });
    out.calls.push({ kind: "tool", name, text: text(r.content?.[0]), isError: !!r.isError });
  } catch (e) { out.calls.push({ kind: "tool", name, error: String(e?.message ?? e) }); }
}
for (const name of want.prompts ?? []) {
  try {
    const r = await client.getPrompt({ name, arguments: {} });
    out.calls.push({ kind: "prompt", name, text: text(r.messages?.[0]) });
  } catch (e) { out.calls.push({ kind: "prompt", name, error: String(e?.message ?? e) }); }
}
for (const uri of want.resources ?? []) {
  try {
    const r = await client.readResource({ uri });
    out.calls.push({ kind: "resource", name: uri, text: r.contents?.[0]?.text });
  } catch (e) { out.calls.push({ kind: "resource", name: uri, error: String(e?.message ?? e) }); }
}
if (want.listen?.length) {
  // subscriptions/listen to the URIs of want.listen; waits (at most 30 seconds) until an update
  // has arrived for each URI the acknowledgement names, while the test makes the backends send
  // them.
  out.updates = [];
  client.setNotificationHandler("notifications/resources/updated", (n) => { out.updates.push(n.params.uri); });
  const sub = await client.listen({ resourceSubscriptions: want.listen });
  out.honored = sub.honoredFilter?.resourceSubscriptions ?? [];
  const deadline = Date.now() + 30000;
  while (!out.honored.every((u) => out.updates.includes(u)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  await sub.close();
}
process.stdout.write(JSON.stringify(out) + "\n");
await client.close();
