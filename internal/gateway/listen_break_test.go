package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestListenEndsWithABrokenBackendStream: through the gateway binary, a listen to two real
// backends whose first goes away (its connections dropped, as at a restart) ends with the
// graceful-end result rather than going on with the second alone, its client unaware that it
// hears nothing more of the first. The listen the client opens again leaves the backend that
// cannot be reached out, and still hears the other.
func TestListenEndsWithABrokenBackendStream(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	beta := mcptest.StartServer(t, "beta")
	gw := startTestGateway(t, nil, alpha, beta)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := listen(t, ctx, gw, `{"toolsListChanged":true}`, "")
	if ack := <-events; !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first event %s", ack)
	}
	waitBackendAcknowledgesListen(t, alpha)
	waitBackendAcknowledgesListen(t, beta)
	alpha.Close()
	select {
	case ev := <-events:
		if !strings.Contains(ev, `"id":"L","result":{"resultType":"complete"`) {
			t.Fatalf("event %s, want the listen's graceful end", ev)
		}
	case <-time.After(30 * time.Second): // fail-safe
		t.Fatal("the listen went on without alpha's stream")
	}

	beta.Reset()
	again := listen(t, ctx, gw, `{"toolsListChanged":true}`, "")
	if ack := <-again; !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first event %s", ack)
	}
	waitBackendAcknowledgesListen(t, beta)
	beta.MCP().AddTool(&mcp.Tool{Name: "fresh", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	select {
	case ev := <-again:
		if !strings.Contains(ev, "notifications/tools/list_changed") {
			t.Fatalf("event %s, want beta's tools/list_changed", ev)
		}
	case <-time.After(30 * time.Second): // fail-safe
		t.Fatal("no list_changed of beta once alpha was gone")
	}
}
