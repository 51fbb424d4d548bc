package pre2026

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLegacyBusySessionCallFails: with a session already waiting for as many answers as it may
// (legacy.maxPendingPerSession), another call that needs its client's input ends at once with a
// tool error that says why, the client is not asked, and the waiting call still completes once
// answered. A real Go SDK client of 2025-11-25 and a real backend.
func TestLegacyBusySessionCallFails(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{Deps: mcphttp.Deps{MRTR: testMRTRCodec(t)}, Edge: Config{MaxPendingPerSession: 1}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	asked := make(chan struct{}, 4)
	release := make(chan struct{})
	var once sync.Once
	done := func() { once.Do(func() { close(release) }) }
	t.Cleanup(done) // registered after the client's, so it runs first: a failed test does not hang
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}))
	first := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__ask_name", Arguments: map[string]any{}})
		if err != nil {
			t.Errorf("the waiting call: %v", err)
		}
		first <- res
	}()
	<-asked
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__ask_name", Arguments: map[string]any{}})
	const want = "The call to be__ask_name failed: too many requests of this session or caller are waiting for the client's answers"
	if err != nil || !res.IsError || mcptest.ResultText(res) != want {
		t.Fatalf("a call beyond the session's pending bound: %v %q, want a tool error saying why", err, mcptest.ResultText(res))
	}
	if len(asked) != 0 {
		t.Error("the client was asked for the refused call")
	}
	done()
	if res := <-first; res == nil || res.IsError || mcptest.ResultText(res) != "Hello, Ada" {
		t.Fatalf("the waiting call: %+v", res)
	}
}
