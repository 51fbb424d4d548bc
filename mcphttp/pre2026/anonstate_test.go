//lint:file-ignore SA1019 pre-2026 clients and backends still use logging, sampling and roots, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package pre2026

import (
	"encoding/hex"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestUnauthenticatedStatePerClient: without authentication, the state a pre-2026 session sets
// (its log level here) is kept in its client address's record, bounded per address: a client
// that opens many sessions pushes out only its own sessions' state, never another client's.
// Before, every unauthenticated client shared the one record of the empty caller, so one client
// opening maxStateSessions sessions dropped every other client's levels and subscriptions.
func TestUnauthenticatedStatePerClient(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, e := startLegacyGateway(t, gwSpec{Server: mcphttp.Config{TrustedProxies: []string{"127.0.0.1/32", "::1/128"}}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	setLevel := func(client, level string) {
		t.Helper()
		sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`, "X-Forwarded-For", client)
		h := legacyHeaders("2025-11-25", sid)
		h.Set("X-Forwarded-For", client)
		r := do(t, "POST", gw.URL, h, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"`+level+`"}}`)
		if r.Status != 200 {
			t.Fatalf("logging/setLevel from %s: %d %s", client, r.Status, r.Body)
		}
	}
	record := func(key string) (callerState, bool) {
		t.Helper()
		return e.state.stored(t, key)
	}
	const quiet, busy = "192.0.2.2", "192.0.2.1"
	setLevel(quiet, "debug")
	for range 2 * maxStateSessions {
		setLevel(busy, "error")
	}
	// An unauthenticated session's record is the one of the address it was opened from.
	home := func(addr string) string {
		h := legacysession.HomeOf(callerkey.Client(netip.MustParsePrefix(addr + "/32")))
		return "home:" + hex.EncodeToString(h[:])
	}
	cs, ok := record(home(quiet))
	if !ok || len(cs.Sessions) != 1 || cs.Sessions[0].Level != "debug" {
		t.Errorf("the quiet client's record: %+v (found %v), want its one session at debug", cs, ok)
	}
	if cs, _ := record(home(busy)); len(cs.Sessions) != maxStateSessions {
		t.Errorf("the busy client's record holds %d sessions, want its bound %d", len(cs.Sessions), maxStateSessions)
	}
	if _, ok := record(""); ok {
		t.Error("a record of the empty caller: unauthenticated clients share one")
	}
}

// addressTransport sends a client's requests as from the address its target replica sees it
// at (X-Forwarded-For from a trusted proxy): a dual-stack client reaching one replica over IPv4
// and the other over IPv6.
type addressTransport struct {
	base http.RoundTripper
	from map[string]string // by host:port of the replica
}

func (a *addressTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", a.from[r.URL.Host])
	return a.base.RoundTrip(r)
}

// TestUnauthenticatedStateAcrossAddresses: without authentication, a go-sdk client at
// 2025-11-25 that reaches replica A over IPv4 and replica B over IPv6 (two replicas sharing a
// real Redis) keeps its session's log level and subscriptions across them, as an authenticated
// client does: the level set through A applies to its call through B, and the subscription
// made through B feeds its GET stream on A. Another unauthenticated client gets neither. Before,
// the state was kept under the address the request came from, so the client's other address
// found none: its session went on, its level and subscriptions did not.
func TestUnauthenticatedStateAcrossAddresses(t *testing.T) {
	be := mcptest.StartServer(t, "be", chattyTool(), mcptest.WithSubscriptions())
	a, b, sa, _ := twoReplicasOn(t, testredis.Start(t), be,
		mcphttp.Config{TrustedProxies: []string{"127.0.0.1/32", "::1/128"}})
	host := func(gw *testGateway) string { return gw.srv.Listener.Addr().String() }
	rt := newRouteTransport(t, a.URL)
	rt.base = &addressTransport{base: rt.base, from: map[string]string{host(a): "192.0.2.7", host(b): "2001:db8::7"}}
	logs, updates := newLogSink(), &mcptest.ResourceUpdates{}
	cs := mcptest.Connect(t, a.URL, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithRoundTripper(rt),
		mcptest.WithLogging(logs.handler), mcptest.WithResourceUpdated(updates.Handler))
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	rt.post.Store(&b.URL)
	callChatty(t, cs, "b")
	if got := logs.take(t, 2); strings.Join(got, " ") != "info/info/b error/error/b" {
		t.Fatalf("log messages through the other address %q", got)
	}
	for i := 0; !watching(sa); i++ {
		if i == 1000 {
			t.Fatal("the client's GET stream never reached replica A")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "be+" + mcptest.ResourceReadme}); err != nil {
		t.Fatal(err)
	}
	pokeUntil(t, be, updates, "be+"+mcptest.ResourceReadme, mcptest.ResourceReadme)

	// Another client, from the address the first used on B: its session has none of it.
	other := newLogSink()
	cs2 := mcptest.Connect(t, b.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithHeader("X-Forwarded-For", "2001:db8::7"), mcptest.WithLogging(other.handler))
	callChatty(t, cs2, "o")
	other.mu.Lock()
	defer other.mu.Unlock()
	if len(other.got) != 0 {
		t.Errorf("another client got log messages at the first one's level: %q", other.got)
	}
}
