package pre2026

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLegacyURLAskOnlyToAWebPage: a backend's URL-mode elicitation whose url is no web page a
// browser may be sent to (javascript:, data:, file:, a user part that shows one host and goes
// to another, a host a browser reads as another than written) never reaches a 2025-11-25 go-sdk client that declared URL elicitation from a
// 2026-07-28 backend's input_required: the client's handler is never called and the call
// fails. A page of https is asked. (A 2025 backend is declared form elicitation only, so a
// go-sdk one cannot ask for a page; what one that ignores that sends is read by the same
// era.ServerRequest, TestServerRequest.)
func TestLegacyURLAskOnlyToAWebPage(t *testing.T) {
	link := &mcp.Tool{Name: "link", InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"u": {Type: "string"}}}}
	url := func(req *mcp.CallToolRequest) string {
		var args struct{ U string }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return args.U
	}
	modern := mcptest.StartServer(t, "be", mcptest.WithoutDefaults(),
		mcptest.WithTool(link, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.RequestState == "asked" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"page": &mcp.ElicitParams{Mode: "url",
				Message: "Open this", URL: url(req)}}, RequestState: "asked"}, nil
		}))
	gw, _ := startAskingGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: modern.URL()})
	var asked []string
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithCapabilities(&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}),
		mcptest.WithElicitation(func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.URL)
			return &mcp.ElicitResult{Action: "accept"}, nil
		}))
	for _, tool := range []string{"be__link"} {
		for _, u := range []string{"javascript:alert(document.cookie)", "data:text/html,<script>alert(1)</script>", "file:///etc/passwd",
			"https://idp.example@attacker.test/login",
			// Hosts a browser reads otherwise than written: idp.example.attacker.test, 127.0.0.1.
			"https://idp.example%E3%80%82attacker.test/login", "http://0x7f.1/login"} {
			asked = nil
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"u": u}})
			if len(asked) != 0 || (err == nil && !res.IsError) {
				t.Errorf("%s with %s: asked %v, then %v %+v; want the call failed and nothing asked", tool, u, asked, err, res)
			}
		}
		asked = nil
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"u": "https://idp.example/login"}})
		if err != nil || res.IsError || len(asked) != 1 || asked[0] != "https://idp.example/login" {
			t.Errorf("%s with a web page: asked %v, then %v %+v; want it asked", tool, asked, err, res)
		}
	}
}
