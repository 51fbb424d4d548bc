package gateway

import (
	"net/http"
	"strings"
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

// TestUnauthenticatedListensPerClient: without authentication, server.maxListensPerCaller is
// each client address's: a client holding its listens has the next refused with 429 -32012
// while another address listens. Before, listens without a caller were not counted at all.
func TestUnauthenticatedListensPerClient(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
	gw := startTestGateway(t, func(c *Config) { c.Server.MaxListensPerCaller = 1 }, alpha)
	// listen opens a listen from c; a refusal is read whole, a stream is left open until the
	// test ends.
	listen := func(c *http.Client) peerReply {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+gw.MCP+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{`+testMeta+`,"notifications":{"toolsListChanged":true}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = modernHeaders("subscriptions/listen", "")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode == http.StatusOK {
			t.Cleanup(func() { _ = res.Body.Close() })
			return peerReply{status: res.StatusCode}
		}
		return readPeerReply(res)
	}
	a, b := from("127.0.0.2"), from("127.0.0.3")
	if r := listen(a); r.status != http.StatusOK {
		t.Fatalf("client A's first listen: %+v", r)
	}
	wantLimited(t, "client A's second listen", listen(a))
	if r := listen(b); r.status != http.StatusOK {
		t.Errorf("client B's listen while A holds its own: %+v", r)
	}
}
