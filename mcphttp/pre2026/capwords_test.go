//lint:file-ignore SA1019 pre-2026 clients still use sampling, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package pre2026

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdkjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// askingTools are a 2026-07-28 backend's tools that need something of the client: "link" an
// URL-mode elicitation, "agent" sampling with tools, "needs_url" a -32021 error naming URL-mode
// elicitation, as a backend refuses a request that did not declare it.
func askingTools() []mcptest.Option {
	obj := &jsonschema.Schema{Type: "object"}
	return []mcptest.Option{
		mcptest.WithTool(&mcp.Tool{Name: "link", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"sign_in": &mcp.ElicitParams{
				Mode: "url", URL: "https://idp.example/sign-in", Message: "Sign in"}}, RequestState: "link/v1"}, nil
		}),
		mcptest.WithTool(&mcp.Tool{Name: "agent", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"plan": &mcp.CreateMessageWithToolsParams{
				MaxTokens: 10, Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "plan"}}}},
				Tools: []*mcp.Tool{{Name: "search", InputSchema: obj}}}}, RequestState: "agent/v1"}, nil
		}),
		mcptest.WithTool(&mcp.Tool{Name: "needs_url", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &sdkjsonrpc.Error{Code: -32021, Message: "Missing required client capability",
				Data: json.RawMessage(`{"requiredCapabilities":{"elicitation":{"url":{}}}}`)}
		}),
	}
}

// TestLegacyNoCapabilityNamed: a call that needs what a pre-2026 client did not declare ends
// with an error naming it as the client knows it, whichever path found the need (the gateway's
// confirmation, a backend's input_required, a backend's -32021), and nothing is asked. URL mode
// is "URL-mode elicitation", and form mode "form-mode elicitation" to a client that declared URL
// mode only: never "elicitation, which this client did not declare" to a client that declared
// elicitation. What the client's version has no way to declare is said to be missing from that
// version (2025-06-18 has neither URL mode nor sampling with tools, 2025-03-26 no elicitation at
// all, which is what it is told, whatever the mode). Before, a client that
// declared form mode was told it had not declared elicitation.
func TestLegacyNoCapabilityNamed(t *testing.T) {
	var runs atomic.Int32
	be := mcptest.StartServer(t, "be", append(askingTools(), destructiveTool(&runs))...)
	gw, asker := startAskingGateway(t, gwSpec{Server: mcphttp.Config{ConfirmDestructiveTools: true}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	const (
		undeclared = ", which this client did not declare"
		in0618     = ", which MCP 2025-06-18 (the version this client speaks) does not have"
		in0326     = ", which MCP 2025-03-26 (the version this client speaks) does not have"
	)
	for _, tt := range []struct{ version, caps, tool, want string }{
		{"2025-11-25", `{"elicitation":{"url":{}}}`, "be__wipe", "requires form-mode elicitation" + undeclared},
		{"2025-11-25", `{}`, "be__wipe", "requires elicitation" + undeclared},
		{"2025-11-25", `{"elicitation":{"form":{}}}`, "be__link", "requires URL-mode elicitation" + undeclared},
		{"2025-11-25", `{"elicitation":{"form":{}}}`, "be__needs_url", "requires URL-mode elicitation" + undeclared},
		{"2025-11-25", `{"sampling":{}}`, "be__agent", "requires sampling.tools" + undeclared},
		{"2025-06-18", `{"elicitation":{}}`, "be__link", "requires URL-mode elicitation" + in0618},
		{"2025-06-18", `{"elicitation":{}}`, "be__needs_url", "requires URL-mode elicitation" + in0618},
		{"2025-06-18", `{"sampling":{}}`, "be__agent", "requires sampling.tools" + in0618},
		{"2025-03-26", `{"elicitation":{}}`, "be__link", "requires elicitation" + in0326},
		{"2025-03-26", `{"elicitation":{}}`, "be__wipe", "requires elicitation" + in0326},
	} {
		sid, _ := legacyInit(t, gw.URL, tt.version, tt.caps)
		r := do(t, "POST", gw.URL, legacyHeaders(tt.version, sid),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tt.tool+`","arguments":{}}}`)
		if want := "The call to " + tt.tool + " " + tt.want; !strings.Contains(string(r.Body), want) {
			t.Errorf("%s %s %s: %d %s, want %q", tt.version, tt.caps, tt.tool, r.Status, r.Body, want)
		}
	}
	if got := asker.askedMethods(); len(got) != 0 || runs.Load() != 0 {
		t.Errorf("asked %v, ran %d", got, runs.Load())
	}
}
