// Package dnstest is a DNS server on loopback for tests that must see what the gateway does
// with a name whose answer someone else controls (a public name resolving to loopback, to the
// cloud metadata service): it answers A and AAAA questions from a table, as an attacker's zone
// would, NXDOMAIN for every other name, and hands out a net.Resolver that asks it alone. No
// hosts file or system resolver is involved. UntrustedSite is the site such a name leads to,
// counting the connections a client makes there.
package dnstest

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// Resolver starts a DNS server on 127.0.0.1 answering names (lower case, no trailing dot)
// with their addresses, and returns a Go resolver that asks only it. The server stops when the
// test ends.
func Resolver(t testing.TB, names map[string][]netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{pc: pc, names: names}
	var wg sync.WaitGroup
	wg.Go(s.serve)
	t.Cleanup(func() { _ = pc.Close(); wg.Wait() })
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// Hostile returns a resolver (Resolver) for the zone an attacker would serve a gateway: the
// operator's site example.com and loopback.example.net at 127.0.0.1, mapped.example.net at
// ::ffff:127.0.0.1 (an AAAA record carrying loopback) and meta.example.net at 169.254.169.254
// (the cloud metadata service).
func Hostile(t testing.TB) *net.Resolver {
	t.Helper()
	lo := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	return Resolver(t, map[string][]netip.Addr{"example.com": lo, "loopback.example.net": lo,
		"mapped.example.net": {netip.MustParseAddr("::ffff:127.0.0.1")},
		"meta.example.net":   {netip.MustParseAddr("169.254.169.254")}})
}

// TrustSite makes tr, a client's transport, reach srv (a TLS test server) under whatever name
// the table points at it: srv's certificate is trusted and checked as name's (httptest's is for
// example.com) whatever host is dialled, and no proxy from the environment is asked.
func TrustSite(tr *http.Transport, srv *httptest.Server, name string) {
	tr.Proxy = nil
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tr.TLSClientConfig.ServerName = name
}

// UntrustedSite starts a TLS server on loopback whose certificate no client trusts, serving
// 404s, and counts the connections made to it: a test tells a client that refused an address
// before connecting (no new connection) from one that connected and stopped at the
// certificate. It also returns the site's host:port as [::ffff:127.0.0.1]:port, loopback under
// no loopback name, which a client trusts only as a host the operator configured. The server
// stops when the test ends.
func UntrustedSite(t testing.TB) (mapped string, conns *atomic.Int64) {
	t.Helper()
	conns = new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return "[::ffff:127.0.0.1]:" + strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port), conns
}

type server struct {
	pc    net.PacketConn
	names map[string][]netip.Addr
}

func (s *server) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if out, err := s.answer(buf[:n]); err == nil {
			_, _ = s.pc.WriteTo(out, from)
		}
	}
}

func (s *server) answer(q []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		return nil, err
	}
	question, err := p.Question()
	if err != nil {
		return nil, err
	}
	addrs, known := s.names[strings.ToLower(strings.TrimSuffix(question.Name.String(), "."))]
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(question); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	rr := dnsmessage.ResourceHeader{Name: question.Name, Class: dnsmessage.ClassINET}
	for _, a := range addrs {
		switch {
		case question.Type == dnsmessage.TypeA && a.Is4():
			err = b.AResource(rr, dnsmessage.AResource{A: a.As4()})
		case question.Type == dnsmessage.TypeAAAA && a.Is6():
			err = b.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
		if err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
