package gateway

import (
	"net/http"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestUnauthenticatedBoundsPerClient: without authentication the per-caller bounds apply to
// each client address (callerkey.Client): a client that spends its rate limit is refused, with
// 429, Retry-After and -32012, while another address is served, in both eras, and a pre-2026
// client's requests count against its own address. Before, a request without a caller took no
// per-caller rate limit at all, and every client shared one in-flight and listen share.
func TestUnauthenticatedBoundsPerClient(t *testing.T) {
	gw := startTestGateway(t, func(c *Config) {
		// One token earned back an hour: a refusal below cannot expire during the test.
		c.RateLimit.PerCaller = "1/h burst 2"
	}, mcptest.StartServer(t, "alpha"))
	var f *peerFixture
	a, b := from("127.0.0.2"), from("127.0.0.3")
	for i := range 2 {
		if r := f.list(t, a, gw.MCP, ""); r.status != http.StatusOK {
			t.Fatalf("client A's request %d within its limit: %+v", i+1, r)
		}
	}
	wantLimited(t, "client A's third request", f.list(t, a, gw.MCP, ""))
	if r := f.list(t, b, gw.MCP, ""); r.status != http.StatusOK {
		t.Errorf("client B after A spent its limit: %+v", r)
	}
	// B's second token goes to a pre-2026 initialize; its third request is refused in that era too.
	if r := f.legacyInit(t, b, gw.MCP, ""); r.status != http.StatusOK {
		t.Errorf("client B's pre-2026 initialize within its limit: %+v", r)
	}
	wantLimited(t, "client B's pre-2026 initialize over its limit", f.legacyInit(t, b, gw.MCP, ""))
	if r := f.legacyInit(t, from("127.0.0.4"), gw.MCP, ""); r.status != http.StatusOK {
		t.Errorf("a third client's pre-2026 initialize: %+v", r)
	}
}
