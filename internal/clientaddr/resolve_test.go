package clientaddr

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

func resolver(t *testing.T, c Config) *Resolver {
	t.Helper()
	r, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func req(remote string, header string, values ...string) *http.Request {
	r := &http.Request{RemoteAddr: remote, Header: http.Header{}}
	for _, v := range values {
		r.Header.Add(header, v)
	}
	return r
}

// TestClientThroughTrustedProxies: the client is the rightmost address the trusted proxies did
// not write for themselves; a header from a peer that is not trusted is never read, so a client
// that reaches the gateway directly cannot name another client; an entry that is not an address
// stops the walk at the last trusted hop.
func TestClientThroughTrustedProxies(t *testing.T) {
	xff := resolver(t, Config{TrustedProxies: []string{"10.0.0.0/8", "fd00::/8", "127.0.0.1"}})
	fwd := resolver(t, Config{TrustedProxies: []string{"10.0.0.0/8"}, Header: "forwarded"})
	none := resolver(t, Config{})
	tests := []struct {
		name   string
		r      *Resolver
		req    *http.Request
		client string
	}{
		{"no proxies trusted: the peer, header ignored", none, req("198.51.100.7:5000", HeaderXForwardedFor, "203.0.113.9"), "198.51.100.7"},
		{"untrusted peer's header ignored", xff, req("198.51.100.7:5000", HeaderXForwardedFor, "203.0.113.9"), "198.51.100.7"},
		{"untrusted peer's Forwarded ignored", fwd, req("198.51.100.7:5000", HeaderForwarded, "for=203.0.113.9"), "198.51.100.7"},
		{"one proxy", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "203.0.113.9"), "203.0.113.9"},
		{"spoofed entries left of the proxy's", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "1.1.1.1, 2.2.2.2, 203.0.113.9"), "203.0.113.9"},
		{"spoofed entry on an earlier header line", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "1.1.1.1", "203.0.113.9"), "203.0.113.9"},
		{"two trusted hops", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "1.1.1.1, 203.0.113.9, 10.9.9.9"), "203.0.113.9"},
		{"spoofed trusted address left of the client", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "10.5.5.5, 203.0.113.9"), "203.0.113.9"},
		{"every hop trusted: the leftmost", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "10.7.7.7, 10.8.8.8"), "10.7.7.7"},
		{"trusted peer without header", xff, req("10.1.2.3:5000", "X-Other", "1.1.1.1"), "10.1.2.3"},
		{"garbage stops at the last trusted hop", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "203.0.113.9, unknown, 10.9.9.9"), "10.9.9.9"},
		{"empty element stops too", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "203.0.113.9,"), "10.1.2.3"},
		{"port on an entry", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "203.0.113.9:4711"), "203.0.113.9"},
		{"IPv6 entry", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "2001:db8::7"), "2001:db8::7"},
		{"bracketed IPv6 with port", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "[2001:db8::7]:4711"), "2001:db8::7"},
		{"IPv4-mapped IPv6 peer is trusted as IPv4", xff, req("[::ffff:10.1.2.3]:5000", HeaderXForwardedFor, "203.0.113.9"), "203.0.113.9"},
		{"IPv6 trusted peer", xff, req("[fd00::1]:5000", HeaderXForwardedFor, "203.0.113.9"), "203.0.113.9"},
		{"zone refused", xff, req("10.1.2.3:5000", HeaderXForwardedFor, "fe80::1%eth0"), "10.1.2.3"},
		{"Forwarded, quoted IPv6 with port", fwd, req("10.1.2.3:5000", HeaderForwarded, `for=1.1.1.1, for="[2001:db8:cafe::17]:4711";proto=https`), "2001:db8:cafe::17"},
		{"Forwarded, two hops", fwd, req("10.1.2.3:5000", HeaderForwarded, "for=203.0.113.9;by=10.0.0.1, for=10.2.2.2"), "203.0.113.9"},
		{"Forwarded, obfuscated stops", fwd, req("10.1.2.3:5000", HeaderForwarded, "for=203.0.113.9, for=_hidden"), "10.1.2.3"},
		{"Forwarded, element without for", fwd, req("10.1.2.3:5000", HeaderForwarded, "proto=https"), "10.1.2.3"},
		{"Forwarded set, X-Forwarded-For not read", fwd, req("10.1.2.3:5000", HeaderXForwardedFor, "203.0.113.9"), "10.1.2.3"},
		{"X-Forwarded-For set, Forwarded not read", xff, req("10.1.2.3:5000", HeaderForwarded, "for=203.0.113.9"), "10.1.2.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Client(tt.req); got != netip.MustParseAddr(tt.client) {
				t.Errorf("client %v, want %s", got, tt.client)
			}
		})
	}
	if got := xff.Client(&http.Request{RemoteAddr: "@"}); got.IsValid() {
		t.Errorf("a peer that is not an address gave %v", got)
	}
}

// TestKeyGroupsIPv6ByPrefix: IPv6 clients are one client per configured prefix (/64 by
// default), IPv4 clients per address; the loopback ::1 is one /64 like any other.
func TestKeyGroupsIPv6ByPrefix(t *testing.T) {
	def := resolver(t, Config{})
	wide := resolver(t, Config{IPv6PrefixBits: 48})
	a, b := netip.MustParseAddr("2001:db8:1:2::1"), netip.MustParseAddr("2001:db8:1:2:ffff::9")
	c := netip.MustParseAddr("2001:db8:1:3::1")
	if def.Key(a) != def.Key(b) || def.Key(a) == def.Key(c) {
		t.Errorf("/64: %v %v %v", def.Key(a), def.Key(b), def.Key(c))
	}
	if wide.Key(a) != wide.Key(c) {
		t.Errorf("/48: %v %v", wide.Key(a), wide.Key(c))
	}
	if k := def.Key(netip.MustParseAddr("::1")); k != netip.MustParsePrefix("::/64") {
		t.Errorf("::1 grouped as %v", k)
	}
	v4a, v4b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	if def.Key(v4a) == def.Key(v4b) || def.Key(v4a).Bits() != 32 {
		t.Errorf("IPv4: %v %v", def.Key(v4a), def.Key(v4b))
	}
}

// TestConfigValidate: every bad entry is reported under its key, together.
func TestConfigValidate(t *testing.T) {
	errs := Config{TrustedProxies: []string{"10.0.0.0/8", "10.0.0.0/33", "proxy.example", "fe80::1%eth0"},
		Header: "X-Real-IP", IPv6PrefixBits: 129}.Validate()
	for _, k := range []string{"trustedProxies[1]", "trustedProxies[2]", "trustedProxies[3]", "clientAddressHeader", "clientIPv6Prefix"} {
		if errs[k] == nil {
			t.Errorf("%s not reported: %v", k, errs)
		}
	}
	if len(errs) != 5 {
		t.Errorf("%d problems, want 5: %v", len(errs), errs)
	}
	if !strings.Contains(errs["trustedProxies[1]"].Error(), "10.0.0.0/33") {
		t.Errorf("the error does not name the entry: %v", errs["trustedProxies[1]"])
	}
	if errs := (Config{TrustedProxies: []string{"192.0.2.1", "2001:db8::/32"}, Header: "forwarded"}).Validate(); len(errs) != 0 {
		t.Errorf("good configuration refused: %v", errs)
	}
}
