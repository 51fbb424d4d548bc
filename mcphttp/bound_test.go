package mcphttp

import (
	"net/netip"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestBoundKeyPerClient: what a request's per-caller bounds are charged to. Without
// authentication it is its client address group's key, even with the per-client bounds and
// the client address log off: two addresses have two keys, two addresses of one IPv6 /64 one,
// and no client key is a caller's. With a verified caller it is the caller's key, whatever
// address the caller comes from.
func TestBoundKeyPerClient(t *testing.T) {
	s, _ := testServer(t, Config{PerClient: PerClientConfig{MaxUnauthenticated: -1, FailedAuthPerMinute: -1}},
		oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{}, Deps{})
	key := func(peer string, p *authz.Principal) string {
		x := &request{shared: shared{s: s, peer: netip.MustParseAddr(peer), caller: identity{principal: p}}}
		return x.bound()
	}
	a, b := key("192.0.2.1", nil), key("192.0.2.2", nil)
	if a == b || a == "" || b == "" {
		t.Errorf("two client addresses: %q and %q, want two keys", a, b)
	}
	if a != callerkey.Client(netip.MustParsePrefix("192.0.2.1/32")) {
		t.Errorf("client 192.0.2.1: %q", a)
	}
	if v6a, v6b := key("2001:db8::1", nil), key("2001:db8::2", nil); v6a != v6b {
		t.Errorf("one IPv6 /64: %q and %q, want one key", v6a, v6b)
	}
	if v6 := key("2001:db8:0:1::1", nil); v6 == key("2001:db8::1", nil) {
		t.Errorf("two IPv6 /64s share %q", v6)
	}
	if _, _, ok := callerkey.Split(a); ok {
		t.Errorf("a client's key %q splits as a caller's", a)
	}
	// Every address has its own key, however many call.
	for i := range 8193 {
		peer := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		if got, want := key(peer.String(), nil), callerkey.Client(netip.PrefixFrom(peer, 32)); got != want {
			t.Fatalf("client %v: %q, want %q", peer, got, want)
		}
	}
	alice := &authz.Principal{Issuer: "https://issuer.example", Subject: "alice"}
	if k1, k2 := key("192.0.2.1", alice), key("192.0.2.2", alice); k1 != alice.CallerKey() || k2 != k1 {
		t.Errorf("an authenticated caller from two addresses: %q and %q, want %q", k1, k2, alice.CallerKey())
	}
}
