package webpage

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/egress"
	"github.com/mcp-gateway/gateway/internal/testsupport/dnstest"
)

// TestSignInIssuerEndpointsJudged: the sign-in's default client goes only where internal/egress
// lets it: an issuer not on this machine whose discovery document names a token endpoint or key
// set on loopback, at the metadata service or over http (clear text) is unusable, a discovery
// redirected to loopback is not followed, and a token endpoint under a name resolving to
// loopback is not connected to (the code and client secret would go there); the issuer's own
// host, at the same address, is discovered and reached.
func TestSignInIssuerEndpointsJudged(t *testing.T) {
	t.Parallel()
	var doc atomic.Pointer[map[string]string]
	var elsewhere atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host, _, _ := net.SplitHostPort(r.Host); host != "example.com" {
			elsewhere.Add(1)
		}
		switch {
		case r.URL.Path == "/redir/.well-known/openid-configuration":
			_, port, _ := net.SplitHostPort(r.Host)
			http.Redirect(w, r, "http://127.0.0.1:"+port+"/.well-known/openid-configuration", http.StatusFound)
		case r.URL.Path == "/.well-known/openid-configuration":
			m := *doc.Load()
			m["issuer"] = "https://" + r.Host
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q}`,
				m["issuer"], m["issuer"]+"/authorize", m["token"], m["jwks"])
		default:
			_, _ = io.WriteString(w, `{}`)
		}
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	r := dnstest.Hostile(t)
	issuerURL := fmt.Sprintf("https://example.com:%d", port)
	at := func(host, path string) string { return fmt.Sprintf("https://%s:%d%s", host, port, path) }
	newIssuer := func(u string) *issuer {
		c := issuerClient(issuerURL, &net.Dialer{Resolver: r})
		dnstest.TrustSite(c.Transport.(boundedTransport).Transport, srv, "example.com")
		return &issuer{url: u, client: c, now: time.Now}
	}
	for name, m := range map[string]map[string]string{
		"token endpoint on loopback":        {"token": fmt.Sprintf("http://127.0.0.1:%d/token", port), "jwks": issuerURL + "/jwks"},
		"token endpoint IPv4-mapped":        {"token": at("[::ffff:127.0.0.1]", "/token"), "jwks": issuerURL + "/jwks"},
		"key set at the metadata service":   {"token": issuerURL + "/token", "jwks": "https://169.254.169.254/jwks"},
		"key set under a loopback spelling": {"token": issuerURL + "/token", "jwks": at("2130706433", "/jwks")},
		"token endpoint over http":          {"token": fmt.Sprintf("http://example.com:%d/token", port), "jwks": issuerURL + "/jwks"},
		"key set over http":                 {"token": issuerURL + "/token", "jwks": fmt.Sprintf("http://example.com:%d/jwks", port)},
	} {
		doc.Store(&m)
		if _, err := newIssuer(issuerURL).get(t.Context()); !errors.Is(err, egress.ErrNamed) {
			t.Errorf("%s: %v; want refused", name, err)
		}
	}
	m := map[string]string{"token": at("loopback.example.net", "/token"), "jwks": issuerURL + "/jwks"}
	doc.Store(&m)
	is := newIssuer(issuerURL)
	p, err := is.get(t.Context())
	if err != nil {
		t.Fatalf("a token endpoint under a public name: %v; want discovered (its address is judged when dialled)", err)
	}
	resp, err := is.client.Post(p.endpoint.TokenURL, "application/x-www-form-urlencoded", strings.NewReader("code=c"))
	if err == nil {
		_ = resp.Body.Close()
	}
	if !errors.Is(err, egress.ErrRefused) || !strings.Contains(err.Error(), "loopback.example.net") {
		t.Errorf("token endpoint loopback.example.net (127.0.0.1): %v; want refused, naming the host", err)
	}
	// Discovery redirected from the issuer to loopback is not followed.
	if _, err := newIssuer(issuerURL + "/redir").get(t.Context()); !errors.Is(err, egress.ErrNamed) {
		t.Errorf("discovery redirected to 127.0.0.1: %v; want refused", err)
	}
	if _, err := newIssuer(issuerURL).get(t.Context()); err != nil {
		t.Fatalf("the issuer's own host: %v", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests reached the site under a refused host", n)
	}
}
