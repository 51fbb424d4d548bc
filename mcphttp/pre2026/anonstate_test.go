package pre2026

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
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
		v, ok, err := e.state.kv.Get(t.Context(), stateKey(key))
		if err != nil {
			t.Fatal(err)
		}
		var cs callerState
		if ok {
			if err := json.Unmarshal(v, &cs); err != nil {
				t.Fatal(err)
			}
		}
		return cs, ok
	}
	const quiet, busy = "192.0.2.2", "192.0.2.1"
	setLevel(quiet, "debug")
	for range 2 * maxStateSessions {
		setLevel(busy, "error")
	}
	cs, ok := record(callerkey.Client(netip.MustParsePrefix(quiet + "/32")))
	if !ok || len(cs.Sessions) != 1 || cs.Sessions[0].Level != "debug" {
		t.Errorf("the quiet client's record: %+v (found %v), want its one session at debug", cs, ok)
	}
	if cs, _ := record(callerkey.Client(netip.MustParsePrefix(busy + "/32"))); len(cs.Sessions) != maxStateSessions {
		t.Errorf("the busy client's record holds %d sessions, want its bound %d", len(cs.Sessions), maxStateSessions)
	}
	if _, ok := record(""); ok {
		t.Error("a record of the empty caller: unauthenticated clients share one")
	}
}
