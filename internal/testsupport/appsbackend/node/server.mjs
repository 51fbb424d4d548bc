// An MCP Apps backend built on the official ext-apps server helpers (registerAppTool,
// registerAppResource) and the TypeScript SDK v2 server, served over Streamable HTTP for
// 2026-07-28 clients (and the SDK's stateless fallback for 2025 ones).
//
//   node server.mjs <server-name> <view>
//
// It listens on a free loopback port and prints "LISTENING <port>" once ready. It serves:
//   ui://<view>/view.html            the app's UI resource (text/html;profile=mcp-app), with
//                                    _meta.ui (csp, permissions, domain, prefersBorder) on the
//                                    resources/list entry and on the read content item
//   ui://<view>/cities/{city}        a UI resource template, with _meta.ui.csp
//   show_<view>{city}                renders the app (visibility left to its default)
//   refresh_<view>{city}             app-only (visibility ["app"])
//   explain_<view>                   model-only (visibility ["model"])
// Each tool answers "<tool> <city> from <server-name>".
import http from "node:http";
import { McpServer, ResourceTemplate, createMcpHandler } from "@modelcontextprotocol/server";
import { registerAppTool, registerAppResource, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import { z } from "zod";

const [serverName = "apps", view = "weather"] = process.argv.slice(2);
const viewURI = `ui://${view}/view.html`;
const uiMeta = {
  csp: { connectDomains: ["https://api.weather.example"], resourceDomains: ["https://cdn.weather.example"] },
  permissions: { clipboardWrite: {} },
  domain: "a904794854a047f6.example.com",
  prefersBorder: true,
};
const html = `<!DOCTYPE html><html><body><h1>${view}</h1><script>/* calls refresh_${view} */</script></body></html>`;

function build() {
  const server = new McpServer({ name: serverName, version: "1.0.0" });
  const answer = (tool) => async (args) => ({
    content: [{ type: "text", text: `${tool} ${args?.city ?? "-"} from ${serverName}` }],
  });
  registerAppTool(server, `show_${view}`, {
    description: `Show the ${view} of a city`,
    inputSchema: z.object({ city: z.string() }),
    _meta: { ui: { resourceUri: viewURI } },
  }, answer(`show_${view}`));
  registerAppTool(server, `refresh_${view}`, {
    description: `Refresh the ${view} view`,
    inputSchema: z.object({ city: z.string() }),
    _meta: { ui: { resourceUri: viewURI, visibility: ["app"] } },
  }, answer(`refresh_${view}`));
  registerAppTool(server, `explain_${view}`, {
    description: `Explain the ${view} view`,
    _meta: { ui: { resourceUri: viewURI, visibility: ["model"] } },
  }, async () => ({ content: [{ type: "text", text: `explain_${view} - from ${serverName}` }] }));
  registerAppResource(server, `${view} view`, viewURI, { description: `The ${view} app`, _meta: { ui: uiMeta } },
    async () => ({ contents: [{ uri: viewURI, mimeType: RESOURCE_MIME_TYPE, text: html, _meta: { ui: uiMeta } }] }));
  server.registerResource(`${view} city`, new ResourceTemplate(`ui://${view}/cities/{city}`, { list: undefined }),
    { mimeType: RESOURCE_MIME_TYPE, _meta: { ui: { csp: { connectDomains: ["https://api.weather.example"] } } } },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: RESOURCE_MIME_TYPE, text: html }] }));
  return server;
}

const handler = createMcpHandler(build, { onerror: (e) => process.stderr.write(`mcp: ${e.message}\n`) });

// node:http to the handler's web-standard face.
const httpServer = http.createServer(async (req, res) => {
  try {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
      else if (v !== undefined) headers.set(k, v);
    }
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method, headers, body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
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
process.stdin.on("end", () => process.exit(0)); // the test's pipe closes: stop
process.stdin.resume();
