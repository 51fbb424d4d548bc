package authz

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/dnstest"
)

// TestKeySetWhereTheIssuerSends: the key set an issuer's discovery document names is fetched
// only where internal/egress lets the gateway go, by the default client New builds: a loopback
// literal named by an issuer that is not on loopback, a name resolving to loopback (A or
// IPv4-mapped) or to the metadata service, and a redirect from the issuer to loopback are each
// refused (class "refused") before anything is fetched there; the issuer's own host, the
// operator's, at the same address is fetched.
func TestKeySetWhereTheIssuerSends(t *testing.T) {
	t.Parallel()
	var jwksURI atomic.Pointer[string]
	var keyFetches atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == discoveryPath:
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"issuer":"https://%s","jwks_uri":%q}`, r.Host, *jwksURI.Load())
		case r.URL.Path == "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case r.URL.Path == "/jwks":
			keyFetches.Add(1)
			_, _ = io.WriteString(w, `{"keys":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	r := dnstest.Hostile(t)
	issuer := fmt.Sprintf("https://example.com:%d", port)
	c := defaultClient(Config{Issuers: []IssuerConfig{{Issuer: issuer}}, FetchTimeout: 5 * time.Second}, &net.Dialer{Resolver: r})
	dnstest.TrustSite(c.Transport.(*http.Transport), srv, "example.com")
	for _, uri := range []string{
		fmt.Sprintf("http://127.0.0.1:%d/jwks", port), fmt.Sprintf("https://[::ffff:127.0.0.1]:%d/jwks", port),
		fmt.Sprintf("https://localhost:%d/jwks", port), fmt.Sprintf("https://127.1:%d/jwks", port),
		fmt.Sprintf("https://loopback.example.net:%d/jwks", port), fmt.Sprintf("https://mapped.example.net:%d/jwks", port),
		"https://meta.example.net/jwks", "https://169.254.169.254/jwks",
		fmt.Sprintf("%s/redirect?to=http://127.0.0.1:%d/jwks", issuer, port),
		fmt.Sprintf("%s/redirect?to=https://loopback.example.net:%d/jwks", issuer, port),
	} {
		jwksURI.Store(&uri)
		got, err := discover(t.Context(), c, issuer)
		if err == nil {
			_, err = fetchJWKS(t.Context(), c, got)
		}
		if FetchErrorClass(err) != FetchRefused {
			t.Errorf("jwks_uri %s: %v (class %s); want refused", uri, err, FetchErrorClass(err))
		}
	}
	if n := keyFetches.Load(); n != 0 {
		t.Fatalf("%d key-set fetches reached the server where the gateway must not go", n)
	}
	uri := issuer + "/jwks"
	jwksURI.Store(&uri)
	got, err := discover(t.Context(), c, issuer)
	if err == nil {
		_, err = fetchJWKS(t.Context(), c, got)
	}
	if err != nil || keyFetches.Load() != 1 {
		t.Fatalf("the issuer's own host: %v, %d fetches; want the key set fetched", err, keyFetches.Load())
	}
}

// TestProbeIssuerGoesWhereTheAuthenticatorGoes: check-config's probe, given no client, uses the
// authenticator's default one: a redirect from a loopback issuer's key set to
// ::ffff:127.0.0.1 (which reaches loopback without being a loopback name) is refused before
// any connection, as the authenticator refuses it; the key set itself is fetched.
func TestProbeIssuerGoesWhereTheAuthenticatorGoes(t *testing.T) {
	t.Parallel()
	var jwksPath atomic.Pointer[string]
	var keyFetches atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case discoveryPath:
			_, _ = fmt.Fprintf(w, `{"issuer":"http://%s","jwks_uri":"http://%s%s"}`, r.Host, r.Host, *jwksPath.Load())
		case "/redirect":
			_, port, _ := net.SplitHostPort(r.Host)
			http.Redirect(w, r, "http://[::ffff:127.0.0.1]:"+port+"/jwks", http.StatusFound)
		case "/jwks":
			keyFetches.Add(1)
			_, _ = io.WriteString(w, `{"keys":[]}`)
		}
	}))
	t.Cleanup(srv.Close)
	p := "/redirect"
	jwksPath.Store(&p)
	if _, err := ProbeIssuer(t.Context(), Config{Issuers: []IssuerConfig{{Issuer: srv.URL}}}, 0); FetchErrorClass(err) != FetchRefused || keyFetches.Load() != 0 {
		t.Errorf("key set redirected to ::ffff:127.0.0.1: %v (class %s), %d fetches; want refused, none", err, FetchErrorClass(err), keyFetches.Load())
	}
	p = "/jwks"
	jwksPath.Store(&p)
	if _, err := ProbeIssuer(t.Context(), Config{Issuers: []IssuerConfig{{Issuer: srv.URL}}}, 0); !errors.Is(err, errNoUsableKey) || keyFetches.Load() != 1 {
		t.Errorf("the key set: %v, %d fetches; want it fetched (and found empty)", err, keyFetches.Load())
	}
}

// TestProbeIssuerTrustsWhatTheAuthenticatorTrusts: check-config's probe of one issuer and the
// authenticator serve builds judge the same configuration alike, both ways, each with its own
// default client. A real issuer on loopback names its key set at another configured issuer's
// host, [::ffff:127.0.0.1] (loopback, but no loopback name, so trusted only as a host the
// operator configured): with that issuer configured, both connect to the key set's server (and
// stop at its certificate, which nothing trusts); without it, both refuse it before connecting.
// A probe trusting the probed issuer's hosts alone refused what the authenticator reaches.
func TestProbeIssuerTrustsWhatTheAuthenticatorTrusts(t *testing.T) {
	t.Parallel()
	clk := newClock()
	iss := startIssuer(t, clk)
	mapped, conns := dnstest.UntrustedSite(t)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != discoveryPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"issuer":"http://%s","jwks_uri":"https://%s/jwks"}`, r.Host, mapped)
	}))
	t.Cleanup(front.Close)
	tok := mint(t, iss, devissuer.Claims{"iss": front.URL})
	for _, tt := range []struct {
		name      string
		issuers   []IssuerConfig
		wantClass string
	}{
		{"the key set's host configured", []IssuerConfig{{Issuer: front.URL}, {Issuer: "https://" + mapped}}, FetchTLS},
		{"the key set's host not configured", []IssuerConfig{{Issuer: front.URL}}, FetchRefused},
	} {
		cfg := Config{Issuers: tt.issuers}
		before := conns.Load()
		_, probeErr := ProbeIssuer(t.Context(), cfg, 0)
		probed := conns.Load() - before
		_, authErr := newAuth(t, cfg, clk).Authenticate(t.Context(), tok)
		authed := conns.Load() - before - probed
		if FetchErrorClass(probeErr) != tt.wantClass || FetchErrorClass(authErr) != tt.wantClass {
			t.Errorf("%s: probe %v (class %s), authenticator %v (class %s); want both %s",
				tt.name, probeErr, FetchErrorClass(probeErr), authErr, FetchErrorClass(authErr), tt.wantClass)
		}
		if want := tt.wantClass != FetchRefused; (probed > 0) != want || (authed > 0) != want {
			t.Errorf("%s: the key set's server saw %d connection(s) from the probe, %d from the authenticator; want connections %v for both",
				tt.name, probed, authed, want)
		}
	}
}
