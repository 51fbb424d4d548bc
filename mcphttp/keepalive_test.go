package mcphttp

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestKeepAlive: a backend that stays silent longer than the keep-alive interval gets its
// response turned into an SSE stream carrying comments, and the result still arrives.
func TestKeepAlive(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw := startGateway(t, Config{SSEKeepAlive: 40 * time.Millisecond}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	r := do(t, "POST", gw.URL, modern("tools/call", "be__slow"), body("tools/call", `,"name":"be__slow","arguments":{"ms":300}`))
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", r.Status, r.Header.Get("Content-Type"))
	}
	if n := strings.Count(string(r.Body), ": keep-alive\n\n"); n < 2 {
		t.Errorf("%d keep-alive comments in %q, want several", n, r.Body)
	}
	if r.RPC.Error != nil || r.RPC.Result == nil {
		t.Fatalf("no result after the keep-alives: %s", r.Body)
	}
}

// TestNoKeepAliveOnFastCalls: a call answered before the interval stays plain JSON.
func TestNoKeepAliveOnFastCalls(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw := startGateway(t, Config{SSEKeepAlive: time.Minute}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	r := do(t, "POST", gw.URL, modern("tools/call", "be__echo"), body("tools/call", `,"name":"be__echo","arguments":{"text":"x"}`))
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/json" || strings.Contains(string(r.Body), "keep-alive") {
		t.Fatalf("fast call: %d %q %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
}
