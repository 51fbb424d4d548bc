package pre2026

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// rolloutTransport sends every request to the replica the test says (target): a load balancer
// in front of a rollout, which sends to the new replica once the old one goes.
type rolloutTransport struct {
	target atomic.Pointer[string]
	base   http.RoundTripper
}

func (rt *rolloutTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Host = strings.SplitN(*rt.target.Load(), "/", 4)[2] // http://host:port/path
	r.Host = r.URL.Host
	return rt.base.RoundTrip(r)
}

// TestGetStreamSurvivesManyEnds: a go-sdk v1.8.0 client at 2025-11-25, at its default settings,
// whose GET stream the gateway ends again and again (a rollout: each replica that holds the stream
// goes, and the next one serves it) keeps its session, and the resources/updated of its
// subscription still arrive once the stream has been ended more times than the client's
// MaxRetries (5). The client counts a stream end without a new SSE event id as a reconnection
// that made no progress, and past MaxRetries of them fails the whole session; each of the
// gateway's streams now carries an event id of its own once served. Before, the sixth end
// failed the session: its calls got "client is closing".
func TestGetStreamSurvivesManyEnds(t *testing.T) {
	const (
		ends                = 8
		goSDKDefaultRetries = 5 // StreamableClientTransport.MaxRetries left zero
	)
	be := mcptest.StartServer(t, "be", mcptest.WithSubscriptions())
	mem, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replica := func() (*testGateway, *Edge) {
		gw, e := startLegacyGateway(t, gwSpec{EdgeDeps: Deps{State: mem}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
		e.getRetry = time.Millisecond            // the client reconnects at once, rather than after its own second or two
		t.Cleanup(gw.srv.CloseClientConnections) // before the server's Close, which waits for its streams
		return gw, e
	}
	gw, e := replica()
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	rt := &rolloutTransport{base: base}
	rt.target.Store(&gw.URL)
	updates := &mcptest.ResourceUpdates{}
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithResourceUpdated(updates.Handler), mcptest.WithRoundTripper(rt), mcptest.WithRetries(goSDKDefaultRetries))
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "be+" + mcptest.ResourceReadme}); err != nil {
		t.Fatal(err)
	}
	for i := range ends + 1 {
		mcptest.WaitFor(t, fmt.Sprintf("the client's GET stream on replica %d", i), func() bool { return watching(e) })
		if i == ends {
			break
		}
		next, ne := replica()
		rt.target.Store(&next.URL)
		gw.srv.CloseClientConnections() // the replica goes: its GET stream ends
		gw, e = next, ne
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("after the GET stream was ended %d times the session failed: %v", ends, err)
	}
	pokeUntil(t, be, updates, "be+"+mcptest.ResourceReadme, mcptest.ResourceReadme)
}
