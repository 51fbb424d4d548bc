package pre2026

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLegacyBackendRequestKeepsAlive: a 2025-11-25 backend that asks its client mid-call (an
// elicitation on the call's stream) and then works on, silent, keeps the client's response
// alive with comments after the client's answer, as before the question: the relay paused
// the keep-alives once the answer came, and the rest of the backend's call went without them.
// The backend finishes once the client has seen two comments after its answer, or gives up
// after a minute (and the test fails).
func TestLegacyBackendRequestKeepsAlive(t *testing.T) {
	var finished atomic.Bool
	tool := &mcp.Tool{Name: "ask_then_work", InputSchema: &jsonschema.Schema{Type: "object"}}
	be := mcptest.StartLegacyServer(t, "old", mcptest.WithoutDefaults(),
		mcptest.WithTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Go on?", RequestedSchema: &jsonschema.Schema{
				Type: "object", Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}}}); err != nil {
				return nil, err
			}
			for deadline := time.Now().Add(time.Minute); !finished.Load() && time.Now().Before(deadline); {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(10 * time.Millisecond):
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "worked"}}}, nil
		}))
	gw, _ := startLegacyGateway(t, gwSpec{Server: mcphttp.Config{SSEKeepAlive: 100 * time.Millisecond}},
		upstreams.UpstreamConfig{Name: "old", URL: be.URL()})
	waiting := mcptest.NewKeepAlives()
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithRoundTripper(waiting),
		mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			waiting.After.Store(true)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		}))
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "old__ask_then_work", Arguments: map[string]any{}})
		done <- outcome{res, err}
	}()
	// Two: one could have been written in the instant before the answer reached the gateway.
	for range 2 {
		select {
		case <-waiting.Seen:
		case o := <-done:
			t.Fatalf("the call ended without two keep-alive comments after the client's answer: %v %+v", o.err, o.res)
		}
	}
	finished.Store(true)
	if o := <-done; o.err != nil || o.res.IsError || mcptest.ResultText(o.res) != "worked" {
		t.Fatalf("ask_then_work: %v %+v", o.err, o.res)
	}
}
