// capture.mjs runs one MCP server over stdio and writes its own tools/list, with where it came
// from, as JSON on standard output. Usage: node capture.mjs SOURCE COMMAND [ARGS...]
// It speaks the 2025-06-18 handshake (initialize, then notifications/initialized), which every
// server captured here implements, and follows nextCursor to the end.
import { spawn } from "node:child_process";

const [source, cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "ignore"], env: process.env });
let buf = "";
const waiting = new Map();
child.stdout.on("data", (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, i).trim();
    buf = buf.slice(i + 1);
    if (!line.startsWith("{")) continue;
    let msg;
    try { msg = JSON.parse(line); } catch { continue; }
    if (msg.id !== undefined && waiting.has(msg.id)) {
      waiting.get(msg.id)(msg);
      waiting.delete(msg.id);
    }
  }
});
let next = 1;
function request(method, params) {
  const id = next++;
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  return new Promise((resolve, reject) => {
    waiting.set(id, resolve);
    setTimeout(() => reject(new Error(`${source}: ${method} timed out`)), 60000);
  });
}
const timer = setTimeout(() => { console.error(`${source}: timed out`); process.exit(2); }, 90000);
try {
  const init = await request("initialize", {
    protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "toolsearch-capture", version: "1" },
  });
  if (init.error) throw new Error(`${source}: initialize: ${JSON.stringify(init.error)}`);
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  const tools = [];
  let cursor;
  do {
    const res = await request("tools/list", cursor ? { cursor } : {});
    if (res.error) throw new Error(`${source}: tools/list: ${JSON.stringify(res.error)}`);
    tools.push(...res.result.tools);
    cursor = res.result.nextCursor;
  } while (cursor);
  process.stdout.write(JSON.stringify({
    source, server: init.result.serverInfo, protocolVersion: init.result.protocolVersion, tools,
  }, null, 1) + "\n");
} catch (e) {
  console.error(String(e));
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
  child.kill();
  setTimeout(() => process.exit(), 200);
}
