package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/dnstest"
)

// TestClassFamily: every class of address, in each way an address can be written to reach it
// (IPv4, IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6, zoned), is judged by the IPv4 or
// IPv6 address a packet to it ends up at, a Teredo address by the worse of the two it carries; and Check holds a name to the rule its address is held to
// as an IP literal, but that loopback is reached only under a loopback name or an operator's
// host.
func TestClassFamily(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr  string
		class Class
	}{
		{"127.0.0.1", Loopback}, {"127.255.1.2", Loopback}, {"::1", Loopback}, {"::ffff:127.0.0.1", Loopback},
		{"::127.0.0.1", Loopback}, {"64:ff9b::127.0.0.1", Loopback}, {"::ffff:7f00:2", Loopback},
		{"169.254.169.254", LinkLocal}, {"::ffff:169.254.169.254", LinkLocal}, {"64:ff9b::a9fe:a9fe", LinkLocal},
		{"fe80::1", LinkLocal}, {"fe80::1%lo", LinkLocal}, {"224.0.0.1", LinkLocal}, {"ff02::1", LinkLocal},
		{"0.0.0.0", Unspecified}, {"0.1.2.3", Unspecified}, {"::", Unspecified}, {"::ffff:0.0.0.0", Unspecified},
		{"239.1.1.1", Multicast}, {"ff05::1", Multicast}, {"255.255.255.255", Multicast}, {"ff01::1", Multicast},
		{"10.0.0.5", Private}, {"172.16.0.1", Private}, {"192.168.1.10", Private}, {"100.64.0.1", Private},
		{"fd00::1", Private}, {"::ffff:10.1.2.3", Private},
		{"8.8.8.8", Public}, {"2001:4860:4860::8888", Public}, {"::ffff:8.8.8.8", Public}, {"64:ff9b::808:808", Public},
		// 6to4 (2002:V4ADDR::/48) is judged as its IPv4 address.
		{"2002:7f00:1::", Loopback}, {"2002:7f00:1:5::1", Loopback}, {"2002:a9fe:a9fe::1", LinkLocal},
		{"2002::1", Unspecified}, {"2002:ef01:101::", Multicast}, {"2002:a00:5::", Private}, {"2002:808:808::1", Public},
		// Teredo (2001:0:SERVER:flags:port:^CLIENT) as the more refused of the two it carries:
		// server 65.54.227.120 with client 127.0.0.1, 10.0.0.5, 0.0.0.0, 8.8.8.8; server
		// 169.254.169.254 and 127.0.0.1 with client 8.8.8.8.
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", Loopback}, {"2001:0:4136:e378::f5ff:fffa", Private},
		{"2001:0:4136:e378::ffff:ffff", Unspecified}, {"2001:0:4136:e378:8000:63bf:f7f7:f7f7", Public},
		{"2001:0:a9fe:a9fe::f7f7:f7f7", LinkLocal}, {"2001:0:7f00:1::f7f7:f7f7", Loopback},
	}
	var p Policy
	for _, c := range cases {
		ip := netip.MustParseAddr(c.addr)
		if got := ClassOf(ip); got != c.class {
			t.Errorf("ClassOf(%s) = %s, want %s", c.addr, got, c.class)
		}
		wantOK := c.class == Public || c.class == Private
		for _, host := range []string{ip.WithZone("").String(), "as.example.com", "127.1", "2130706433", "0x7f.1", "0177.0.0.1", "localhost."} {
			err := p.Check(host, ip)
			ok := wantOK || (c.class == Loopback && host == ip.String() && (ip.String() == "::1" || strings.HasPrefix(ip.String(), "127.")))
			if (err == nil) != ok {
				t.Errorf("Check(%q, %s) = %v, want allowed %v", host, c.addr, err, ok)
			}
			var r *RefusedError
			if err != nil && (!errors.Is(err, ErrRefused) || !errors.As(err, &r) || !strings.Contains(err.Error(), host)) {
				t.Errorf("Check(%q, %s): %v; want a RefusedError naming the host", host, c.addr, err)
			}
		}
	}
	// "localhost" resolves through the hosts file; its loopback addresses are the literal's.
	for _, h := range []string{"localhost", "LocalHost"} {
		if err := p.Check(h, netip.MustParseAddr("127.0.0.1")); err != nil {
			t.Errorf("%s to 127.0.0.1: %v", h, err)
		}
	}
	// The operator's hosts come from their URLs (HostsOf) in the form net/http dials: a
	// Unicode spelling is compared as the ASCII name the dial sees.
	op := Policy{Hosts: HostsOf("https://mcp.corp.example/mcp", "https://ｓｓｏ.corp.example", "", "::")}
	for _, h := range []string{"MCP.corp.example", "sso.corp.example"} {
		if err := op.Check(h, netip.MustParseAddr("127.0.0.1")); err != nil {
			t.Errorf("an operator's host %s to loopback: %v", h, err)
		}
	}
	if err := op.Check("other.corp.example", netip.MustParseAddr("127.0.0.1")); err == nil {
		t.Error("a host the operator did not configure reaches loopback")
	}
	if err := op.Check("mcp.corp.example", netip.MustParseAddr("169.254.169.254")); err == nil {
		t.Error("an operator's host reaches link-local without an Allow prefix")
	}
	allow := Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("169.254.10.0/24")}}
	for _, a := range []string{"127.0.0.1", "::ffff:127.0.0.1", "169.254.10.7"} {
		if err := allow.Check("as.example.com", netip.MustParseAddr(a)); err != nil {
			t.Errorf("allowed prefix, %s: %v", a, err)
		}
	}
	if err := allow.Check("as.example.com", netip.MustParseAddr("169.254.169.254")); err == nil {
		t.Error("an address outside the allowed prefixes is reached")
	}
}

// countingServer is an HTTP server on addr that counts the connections it accepts.
type countingServer struct {
	srv   *httptest.Server
	addr  string
	conns atomic.Int64
}

// startPair starts counting servers on 127.0.0.1 and 127.0.0.2 (Linux routes 127/8 to
// loopback) at one port, so that a name's addresses differ in the address alone.
func startPair(t *testing.T) (port int, one, two *countingServer) {
	t.Helper()
	ln1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = ln1.Addr().(*net.TCPAddr).Port
	ln2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.2:%d", port))
	if err != nil {
		_ = ln1.Close()
		t.Fatalf("listening on 127.0.0.2 (Linux routes 127/8 to loopback): %v", err)
	}
	return port, startCounting(t, ln1), startCounting(t, ln2)
}

func startCounting(t *testing.T, ln net.Listener) *countingServer {
	t.Helper()
	c := &countingServer{addr: ln.Addr().String()}
	c.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "reached "+ln.Addr().String())
	}))
	c.srv.Listener = ln
	c.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	c.srv.Start()
	t.Cleanup(c.srv.Close)
	return c
}

func client(p *Policy, r *net.Resolver) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = p.Dial(&net.Dialer{Resolver: r})
	return &http.Client{Transport: t}
}

// TestNamesJudgedByTheirAddresses: a name is held to the rule of the address it resolves to,
// on the address actually dialled, for every address tried: a public name whose DNS answer is
// loopback (as A, as AAAA, IPv4-mapped in an AAAA, or reached through inet_aton's decimal,
// octal and hex spellings some resolvers read) is refused, and nothing is connected to; a
// redirect to such a name, or to a refused IP literal, is refused the same way; an Allow
// prefix lets through exactly what it covers, trying the next address when one is refused.
func TestNamesJudgedByTheirAddresses(t *testing.T) {
	t.Parallel()
	port, one, two := startPair(t)
	lo := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	r := dnstest.Resolver(t, map[string][]netip.Addr{
		"as.example.com": lo, "mapped.example.com": {netip.MustParseAddr("::ffff:127.0.0.1")},
		"v6.example.com": {netip.MustParseAddr("::1")}, "meta.example.com": {netip.MustParseAddr("169.254.169.254")},
		"2130706433": lo, "0x7f.1": lo, "0177.0.0.1": lo, "127.1": lo,
		"both.example.com": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")},
	})
	get := func(c *http.Client, u string) (string, error) {
		resp, err := c.Get(u)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	refusedNaming := func(err error, host string) bool {
		var r *RefusedError
		return errors.As(err, &r) && r.Host == host && strings.Contains(err.Error(), "not connecting to "+host)
	}
	var p Policy
	c := client(&p, r)
	for _, host := range []string{"as.example.com", "mapped.example.com", "v6.example.com", "meta.example.com", "0x7f.1",
		"2130706433", "0177.0.0.1", "127.1"} {
		_, err := get(c, fmt.Sprintf("http://%s:%d/", host, port))
		// Go's own resolver does not look up an all-numeric name (a C resolver reads it as
		// inet_aton does); either way nothing is connected to.
		var dnsErr *net.DNSError
		if numeric := strings.Trim(host, "0123456789.") == ""; !refusedNaming(err, host) && !(numeric && errors.As(err, &dnsErr)) {
			t.Errorf("%s: %v; want refused, naming the host", host, err)
		}
	}
	// The loopback literal is the caller's to judge; it connects.
	if body, err := get(c, fmt.Sprintf("http://127.0.0.1:%d/", port)); err != nil || body != "reached "+one.addr {
		t.Fatalf("the loopback literal: %q, %v", body, err)
	}
	// A redirect from there to a name resolving to loopback, or to the metadata service.
	for to, host := range map[string]string{
		fmt.Sprintf("http://as.example.com:%d/", port):     "as.example.com",
		"http://169.254.169.254/latest/meta-data/":         "169.254.169.254",
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port): "::ffff:127.0.0.1",
	} {
		if _, err := get(c, fmt.Sprintf("http://127.0.0.1:%d/?to=%s", port, to)); !refusedNaming(err, host) {
			t.Errorf("redirect to %s: %v; want refused, naming %s", to, err, host)
		}
	}
	if n := one.conns.Load(); n != 1 {
		t.Errorf("the loopback server took %d connections, want 1 (the literal's; every refusal before connecting)", n)
	}
	// Every address tried is judged: with 127.0.0.2 allowed, a name resolving to 127.0.0.1
	// then 127.0.0.2 skips the first and reaches the second.
	allow := Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}
	if body, err := get(client(&allow, r), fmt.Sprintf("http://both.example.com:%d/", port)); err != nil || body != "reached "+two.addr {
		t.Errorf("both.example.com with 127.0.0.2 allowed: %q, %v; want the second address", body, err)
	}
	if n1, n2 := one.conns.Load(), two.conns.Load(); n1 != 1 || n2 != 1 {
		t.Errorf("connections: 127.0.0.1 %d (want 1), 127.0.0.2 %d (want 1)", n1, n2)
	}
	if _, err := get(client(&allow, r), fmt.Sprintf("http://as.example.com:%d/", port)); !refusedNaming(err, "as.example.com") {
		t.Errorf("as.example.com with only 127.0.0.2 allowed: %v; want refused", err)
	}
}

// TestNamed: a URL a document names is refused when its host is an IP literal of a class
// refused always, in any form, or a spelling that could reach loopback while the document is
// not on a loopback host; a loopback document may name loopback; other hosts pass (their
// addresses are judged when dialled).
func TestNamed(t *testing.T) {
	t.Parallel()
	const remote, local = "https://as.example.com/.well-known/x", "http://127.0.0.1:8080/.well-known/x"
	for _, target := range []string{"https://169.254.169.254/", "https://[::ffff:169.254.169.254]/", "https://[64:ff9b::a9fe:a9fe]/",
		"https://[fe80::1%25eth0]/", "https://0.0.0.0/", "https://[::]/", "https://224.0.0.1/", "https://255.255.255.255/",
		"https://①⑥⑨.②⑤④.①⑥⑨.②⑤④/"} {
		for _, from := range []string{remote, local} {
			if err := Named(from, target); !errors.Is(err, ErrNamed) {
				t.Errorf("Named(%s, %s) = %v; want refused", from, target, err)
			}
		}
	}
	for _, target := range []string{"http://127.0.0.1:9090/", "https://127.1/", "https://2130706433/", "https://0x7f.1/",
		"https://0177.0.0.1/", "https://localhost./", "https://sub.localhost/", "https://LOCALHOST/", "https://[::1]/",
		"https://[::ffff:127.0.0.1]/", "https://[::1%25lo]/",
		// Unicode spellings net/http dials as the loopback name or literal they map to (IDNA).
		"https://ℓocalhost/", "https://ⓛocalhost/", "https://①②⑦.0.0.1/", "https://１２７.０.０.１/"} {
		if err := Named(remote, target); !errors.Is(err, ErrNamed) || !strings.Contains(err.Error(), "as.example.com") {
			t.Errorf("Named(remote, %s) = %v; want refused, naming the document's host", target, err)
		}
		if err := Named(local, target); err != nil {
			t.Errorf("Named(local, %s) = %v; want allowed", target, err)
		}
	}
	for _, target := range []string{"https://tokens.example.net/", "https://10.0.0.5/", "https://[fd00::1]/", "https://8.8.8.8/"} {
		if err := Named(remote, target); err != nil {
			t.Errorf("Named(remote, %s) = %v; want allowed", target, err)
		}
	}
	// Not https, but http on a loopback host: clear text anyone on the path reads or replaces
	// (a key set, a code and client secret), from a document anywhere; the error names no
	// path or query.
	for _, target := range []string{"http://tokens.example.net/jwks?k=q7Zr", "http://10.0.0.5/", "http://[fd00::1]/", "http://8.8.8.8/",
		"ftp://tokens.example.net/", "//tokens.example.net/", "tokens.example.net/x", "ws://tokens.example.net/"} {
		for _, from := range []string{remote, local} {
			if err := Named(from, target); !errors.Is(err, ErrNamed) || strings.Contains(err.Error(), "q7Zr") || strings.Contains(err.Error(), "jwks") {
				t.Errorf("Named(%s, %s) = %v; want refused as not https, naming no path or query", from, target, err)
			}
		}
	}
}

// TestRedirectsJudged: a client following redirects with CheckRedirect does not follow one
// from a host that is not loopback to a loopback literal (which the dial, trusting a loopback
// name, would connect to), nor to the metadata service, nor to http on a host that is not
// loopback; from loopback to loopback it follows.
func TestRedirectsJudged(t *testing.T) {
	t.Parallel()
	port, one, two := startPair(t)
	r := dnstest.Resolver(t, map[string][]netip.Addr{"ext.example.com": {netip.MustParseAddr("127.0.0.2")}})
	// ext.example.com stands for a server elsewhere: its address is allowed, its name is not
	// loopback.
	p := Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}
	c := client(&p, r)
	c.CheckRedirect = CheckRedirect
	for _, to := range []string{fmt.Sprintf("http://127.0.0.1:%d/", port), fmt.Sprintf("http://localhost:%d/", port),
		"http://169.254.169.254/latest/meta-data/", fmt.Sprintf("http://ext.example.com:%d/", port)} {
		resp, err := c.Get(fmt.Sprintf("http://ext.example.com:%d/?to=%s", port, to))
		if err == nil {
			_ = resp.Body.Close()
		}
		if !errors.Is(err, ErrNamed) {
			t.Errorf("redirect from ext.example.com to %s: %v; want refused", to, err)
		}
	}
	if n := one.conns.Load(); n != 0 {
		t.Errorf("127.0.0.1 took %d connections after redirects from elsewhere; want none", n)
	}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/?to=http://localhost:%d/", port, port))
	if err != nil {
		t.Fatalf("redirect within loopback: %v", err)
	}
	_ = resp.Body.Close()
	if two.conns.Load() == 0 || one.conns.Load() == 0 {
		t.Errorf("connections: 127.0.0.1 %d, 127.0.0.2 %d; want both used", one.conns.Load(), two.conns.Load())
	}
}

// TestTransportHasNoProxy: an egress transport never goes through a proxy from the environment,
// where the rule would judge only the proxy's address and the proxy would resolve a learnt
// name (answering 127.0.0.1 or the metadata service) itself.
func TestTransportHasNoProxy(t *testing.T) {
	if tr := (&Policy{}).Transport(nil); tr.Proxy != nil {
		t.Fatal("the egress transport takes a proxy (from the environment)")
	}
}

// TestLocalUseNAT64: an address in the NAT64 local-use prefix 64:ff9b:1::/48 (RFC 8215) may
// carry any IPv4 address, at whichever RFC 6052 position the network's prefix length puts it
// (/48, /56, /64 or /96 within the prefix), so the rule cannot judge the IPv4 address it
// reaches: each is refused, as literal and as a learnt name's AAAA answer, before anything is
// sent, unless the host is the operator's or an Allow prefix lists it.
func TestLocalUseNAT64(t *testing.T) {
	t.Parallel()
	addrs := []string{
		"64:ff9b:1::7f00:1",                  // 127.0.0.1 under a /96
		"64:ff9b:1::a9fe:a9fe",               // 169.254.169.254 under a /96
		"64:ff9b:1:7f00:0:100::",             // 127.0.0.1 under a /48
		"64:ff9b:1:a9:fe:a9fe::",             // 169.254.169.254 under a /56
		"64:ff9b:1:0:a9:fea9:fe00:0",         // 169.254.169.254 under a /64
		"64:ff9b:1::808:808",                 // 8.8.8.8 under a /96: not known to be, so refused too
		"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", // the prefix's last address
	}
	var p Policy
	op := Policy{Hosts: []string{"sso.corp.example"}}
	allow := Policy{Allow: []netip.Prefix{netip.MustParsePrefix("64:ff9b:1::/48")}}
	for _, a := range addrs {
		ip := netip.MustParseAddr(a)
		if got := ClassOf(ip); got != Translated {
			t.Errorf("ClassOf(%s) = %s, want %s", a, got, Translated)
		}
		for _, host := range []string{a, "as.example.com", "localhost"} {
			var r *RefusedError
			if err := p.Check(host, ip); !errors.As(err, &r) || r.Class != Translated || !strings.Contains(err.Error(), "NAT64") {
				t.Errorf("Check(%q, %s) = %v; want refused as local-use NAT64", host, a, err)
			}
		}
		if err := op.Check("sso.corp.example", ip); err != nil {
			t.Errorf("the operator's host at %s: %v; want reached", a, err)
		}
		if err := allow.Check("as.example.com", ip); err != nil {
			t.Errorf("64:ff9b:1::/48 allowed, %s: %v; want reached", a, err)
		}
	}
	if got := ClassOf(netip.MustParseAddr("64:ff9b:2::7f00:1")); got != Public {
		t.Errorf("ClassOf(64:ff9b:2::7f00:1) = %s; want public (outside both NAT64 prefixes)", got)
	}
	// On the dial: a public name whose AAAA answer is in the prefix is refused before connecting.
	r := dnstest.Resolver(t, map[string][]netip.Addr{"nat.example.com": {netip.MustParseAddr("64:ff9b:1::7f00:1")}})
	resp, err := client(&p, r).Get("http://nat.example.com:80/")
	if err == nil {
		_ = resp.Body.Close()
	}
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Host != "nat.example.com" || refused.Class != Translated {
		t.Errorf("nat.example.com (64:ff9b:1::7f00:1): %v; want refused, naming the host", err)
	}
}

// TestTransportBoundsConnectionsPerHost: however many requests wait on one host at once (a
// host that answers slowly, many callers' refreshes), an egress transport opens at most
// maxConnsPerHost connections to it, counted on the server; the requests beyond wait for a
// free connection and are all answered.
func TestTransportBoundsConnectionsPerHost(t *testing.T) {
	t.Parallel()
	var accepted, inFlight atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Add(1)
		<-release
		_, _ = io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := &http.Client{Transport: (&Policy{}).Transport(nil)}
	const requests = maxConnsPerHost + 16
	errs := make(chan error, requests)
	for range requests {
		go func() {
			resp, err := c.Get(srv.URL)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				_ = resp.Body.Close()
			}
			errs <- err
		}()
	}
	// Every connection the transport may open is busy before any is answered.
	waitUntil(t, func() bool { return inFlight.Load() >= maxConnsPerHost })
	close(release)
	for range requests {
		if err := <-errs; err != nil {
			t.Errorf("a request: %v", err)
		}
	}
	if n := accepted.Load(); n > maxConnsPerHost {
		t.Errorf("%d requests at once opened %d connections to one host, want at most %d", requests, n, maxConnsPerHost)
	}
}

// waitUntil polls cond, failing the test after a bound that is a fail-safe, not a timing
// under test.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
