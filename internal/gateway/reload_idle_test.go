package gateway

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// connIssuer is an OpenID issuer on loopback (discovery and a real key set) that knows which
// of its connections are open and which were opened while the test marked a phase.
type connIssuer struct {
	srv   *httptest.Server
	phase atomic.Int64
	mu    sync.Mutex
	open  map[string]bool  // by remote address
	began map[string]int64 // the phase each connection served its first request in
}

func startConnIssuer(t *testing.T) *connIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	c := &connIssuer{open: map[string]bool{}, began: map[string]int64{}}
	c.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		if _, seen := c.began[r.RemoteAddr]; !seen {
			c.began[r.RemoteAddr] = c.phase.Load()
		}
		c.mu.Unlock()
		iss := "http://" + r.Host
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_, _ = fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q,`+
				`"id_token_signing_alg_values_supported":["ES256"]}`, iss, iss+"/authorize", iss+"/token", iss+"/jwks")
		case "/jwks":
			_, _ = w.Write(jwks)
		default:
			http.NotFound(w, r)
		}
	}))
	c.srv.Config.ConnState = func(conn net.Conn, s http.ConnState) {
		c.mu.Lock()
		defer c.mu.Unlock()
		switch s {
		case http.StateNew:
			c.open[conn.RemoteAddr().String()] = true
		case http.StateClosed, http.StateHijacked:
			delete(c.open, conn.RemoteAddr().String())
		}
	}
	c.srv.Start()
	t.Cleanup(c.srv.Close)
	return c
}

// openFrom is the number of open connections that served their first request in phase.
func (c *connIssuer) openFrom(phase int64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for addr := range c.open {
		if p, ok := c.began[addr]; ok && p == phase {
			n++
		}
	}
	return n
}

// TestReloadClosesSignInConnections: the approval page's sign-in reaches its issuer with a
// client of the configuration's own; once a reload retires that configuration, the connection
// it kept alive to the issuer is closed, not left open with its goroutines until the idle
// timeout (one more per reload). Counted on the issuer's server: connections first used by the
// sign-in's discovery, open after the sign-in, closed after the reload.
func TestReloadClosesSignInConnections(t *testing.T) {
	iss := startConnIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	body := func(ttl string) string {
		return "mrtr: {keys: [{id: k1, secret: {value: a-test-only-secret-of-at-least-32-bytes}}]}\n" +
			"approval: {clientID: pages, clientSecret: {value: pages-secret}, sessionTTL: " + ttl + "}\n" +
			authYAML(iss.srv.URL, `["echo"]`, "", alpha)
	}
	f := startReloadGateway(t, "30s", body("30m"))
	const signIn = 1
	iss.phase.Store(signIn)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get("http://" + f.gw.MCP + "/approval/c/" + strings.Repeat("ab", 16))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, iss.srv.URL+"/authorize") {
		t.Fatalf("the page without a session: %d to %q; want 303 to the issuer's sign-in", resp.StatusCode, loc)
	}
	iss.phase.Store(2)
	if n := iss.openFrom(signIn); n == 0 {
		t.Fatal("the sign-in's discovery left no connection open: nothing to count")
	}
	if err := f.reload(t, "30s", body("40m")); err != nil {
		t.Fatalf("reload: %v", err)
	}
	mcptest.WaitFor(t, "the retired sign-in's connections to the issuer to close", func() bool { return iss.openFrom(signIn) == 0 })
}
