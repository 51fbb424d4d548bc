package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsClientHandlesEchoed: what a backend's message carries back of the client's own
// request, as the client sent it (the progress token its progress notifications are named by,
// the request id the gateway writes into the backend's error), is the client's handle, not the
// backend's text. A random handle reads as a credential to high-entropy and a long integer as a
// card, and checked as the backend's text it was blocked (every progress dropped, the result
// withheld) or redacted (a token or id the client cannot match). The same value anywhere else
// is the backend's and still checked.
func TestGuardrailsClientHandlesEchoed(t *testing.T) {
	obj := &jsonschema.Schema{Type: "object"}
	tick := func(message string) mcp.ToolHandler {
		return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if p := req.Params.GetProgressToken(); p != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p, Progress: 1, Message: message})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		}
	}
	tools := []mcptest.Option{
		mcptest.WithTool(&mcp.Tool{Name: "tick", InputSchema: obj}, tick("")),
		mcptest.WithTool(&mcp.Tool{Name: "tick_other", InputSchema: obj}, tick(railAWSKey)),
		mcptest.WithTool(&mcp.Tool{Name: "fail", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32603, Message: "the tool broke"}
		})}
	be := mcptest.StartServer(t, "be", tools...)
	old := mcptest.StartLegacyServer(t, "old", tools...) // a 2025-11-25 backend
	gw := startTestGateway(t, func(c *Config) {
		c.Legacy.Enabled = true
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "out", Tools: []string{"*"},
			Results: guardrails.DirectionConfig{Secrets: "block", PII: "block"}}}}
	}, be, old)
	url := "http://" + gw.MCP + "/mcp"
	call := func(id, tool, token string) *mcptest.Response {
		t.Helper()
		meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
		if token != "" {
			meta += `,"progressToken":` + token
		}
		return mcptest.Do(t, "POST", url, mcptest.RequestHeaders("tools/call", tool),
			`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"_meta":{`+meta+`},"name":"`+tool+`","arguments":{}}}`)
	}
	handles := []string{`"q8Zr4Lm2Xt7Vb1Nc9Kp3Wd6Hs0Jf5Gy"`, `"V1StGXR8Z5jdHi6BmyTq9w"`, `4111111111111111`}
	for _, h := range handles {
		r := call("1", "old__tick", h)
		if res := string(r.RPC.Result); r.Status != http.StatusOK || !strings.Contains(res, `"done"`) || strings.Contains(res, "Refused") {
			t.Errorf("a 2025-11-25 backend's progress named by the client's token %s: %d %s", h, r.Status, r.Body)
		}
		r = call("1", "be__tick", h)
		if res := string(r.RPC.Result); r.Status != http.StatusOK || !strings.Contains(res, `"done"`) || strings.Contains(res, "Refused") ||
			!strings.Contains(string(r.Body), `"progressToken":`+h) {
			t.Errorf("progress named by the client's token %s: %d %s", h, r.Status, r.Body)
		}
		for _, fail := range []string{"be__fail", "old__fail"} {
			r = call(h, fail, "")
			if e := r.RPC.Error; e == nil || e.Message != "the tool broke" || string(r.RPC.ID) != h {
				t.Errorf("%s's error to the request with id %s: %d %s", fail, h, r.Status, r.Body)
			}
		}
	}
	// A 2025-11-25 client through the pre-2026 edge, with a random token of its own.
	progress := make(chan any, 4)
	cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithProgress(func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params.ProgressToken
		}))
	p := &mcp.CallToolParams{Name: "be__tick", Arguments: map[string]any{}}
	p.SetProgressToken("k3Jd9QzX2mLp8VtR4wYb7N")
	res, err := cs.CallTool(context.Background(), p)
	if err != nil || res.IsError {
		t.Errorf("a 2025-11-25 client's call: %v %+v", err, res)
	}
	select { // the client hands its notifications to the handler on its own goroutine
	case tok := <-progress:
		if tok != "k3Jd9QzX2mLp8VtR4wYb7N" {
			t.Errorf("a 2025-11-25 client's progress named %v", tok)
		}
	case <-time.After(5 * time.Second):
		t.Error("a 2025-11-25 client got no progress")
	}
	// The same value elsewhere in a progress notification is the backend's, and checked. (A
	// progress notification under another token than the request's is not relayed at all:
	// TestCallStreamRelaysOnlyItsOwnProgress.)
	r := call("1", "be__tick_other", handles[0])
	if res := string(r.RPC.Result); !strings.Contains(res, "Refused by guardrail") || strings.Contains(string(r.Body), railAWSKey) {
		t.Errorf("a credential as a progress message: %d %s", r.Status, r.Body)
	}
}
