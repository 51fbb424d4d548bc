// A TypeScript SDK v2 backend serving the tools, prompts and resources named in a JSON file,
// over Streamable HTTP for 2026-07-28 clients.
//
//   node backend.mjs <names.json>
//
// names.json is {"tools":[...],"prompts":[...],"resources":[...],"templates":[...]}: every tool
// and prompt answers "ran <name>", every resource "read <uri>", and every read under a resource
// template "read <the URI the server received>". "regionTool":true adds the tool "region",
// whose argument region its schema mirrors into Mcp-Param-Region (x-mcp-header): it answers
// "region=<the argument as JSON>". With "subscribe":true the server advertises
// resources.subscribe, and a POST to /notify?uri=<uri> publishes notifications/resources/updated
// for that exact URI to the subscriptions/listen streams that subscribed to it. It listens on a
// free loopback port and prints "LISTENING <port>" once ready; it exits when its stdin ends.
import http from "node:http";
import { readFileSync } from "node:fs";
import { McpServer, ResourceTemplate, createMcpHandler, fromJsonSchema } from "@modelcontextprotocol/server";

const names = JSON.parse(readFileSync(process.argv[2], "utf8"));

function build() {
  const server = new McpServer({ name: "tsnames", version: "1.0.0" },
    names.subscribe ? { capabilities: { resources: { subscribe: true } } } : undefined);
  for (const name of names.tools ?? []) {
    server.registerTool(name, { description: `tool ${name}` }, async () => ({
      content: [{ type: "text", text: `ran ${name}` }],
    }));
  }
  if (names.regionTool) {
    const inputSchema = fromJsonSchema({ type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } });
    server.registerTool("region", { description: "mirrors region into Mcp-Param-Region", inputSchema }, async (args) => ({
      content: [{ type: "text", text: `region=${JSON.stringify(args.region)}` }],
    }));
  }
  for (const name of names.prompts ?? []) {
    server.registerPrompt(name, { description: `prompt ${name}` }, async () => ({
      messages: [{ role: "user", content: { type: "text", text: `ran ${name}` } }],
    }));
  }
  for (const uri of names.resources ?? []) {
    server.registerResource(uri, uri, { mimeType: "text/plain" }, async () => ({
      contents: [{ uri, mimeType: "text/plain", text: `read ${uri}` }],
    }));
  }
  for (const tmpl of names.templates ?? []) {
    server.registerResource(tmpl, new ResourceTemplate(tmpl, { list: undefined }), { mimeType: "text/plain" },
      async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: `read ${uri.href}` }] }));
  }
  return server;
}

const handler = createMcpHandler(build, { onerror: (e) => process.stderr.write(`mcp: ${e.message}\n`) });

// node:http to the handler's web-standard face. Header values reach it as Node reads them.
const httpServer = http.createServer(async (req, res) => {
  try {
    const u = new URL(req.url, "http://localhost");
    if (names.subscribe && req.method === "POST" && u.pathname === "/notify") {
      await handler.notify.resourceUpdated(u.searchParams.get("uri"));
      res.writeHead(204);
      res.end();
      return;
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
      else if (v !== undefined) headers.set(k, v);
    }
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method, headers, body: req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks),
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
  } catch (e) {
    process.stderr.write(`http: ${e.stack}\n`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});
httpServer.listen(0, "127.0.0.1", () => {
  process.stdout.write(`LISTENING ${httpServer.address().port}\n`);
});
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
