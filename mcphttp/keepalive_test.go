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
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", r.status, r.header.Get("Content-Type"))
	}
	if n := strings.Count(string(r.body), ": keep-alive\n\n"); n < 2 {
		t.Errorf("%d keep-alive comments in %q, want several", n, r.body)
	}
	if r.rpc.Error != nil || r.rpc.Result == nil {
		t.Fatalf("no result after the keep-alives: %s", r.body)
	}
}

// TestNoKeepAliveOnFastCalls: a call answered before the interval stays plain JSON.
func TestNoKeepAliveOnFastCalls(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw := startGateway(t, Config{SSEKeepAlive: time.Minute}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	r := do(t, "POST", gw.URL, modern("tools/call", "be__echo"), body("tools/call", `,"name":"be__echo","arguments":{"text":"x"}`))
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" || strings.Contains(string(r.body), "keep-alive") {
		t.Fatalf("fast call: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
}
