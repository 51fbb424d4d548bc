package useroauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/egress"
	"github.com/mcp-gateway/gateway/internal/testsupport/dnstest"
)

// hostileSite is a backend and its authorization server at https://example.com (a real TLS
// server on loopback, reached by that name, so the documents come from a host that is not
// loopback), serving the metadata a test sets.
type hostileSite struct {
	srv    *httptest.Server
	asMeta atomic.Pointer[map[string]any]
	prm    atomic.Pointer[map[string]any]
	// requests counts the requests that came under a host other than example.com.
	requests atomic.Int64
}

func startHostileSite(t *testing.T) *hostileSite {
	t.Helper()
	h := &hostileSite{}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host, _, _ := net.SplitHostPort(r.Host); r.Host != "example.com" && host != "example.com" {
			h.requests.Add(1)
		}
		if serveHostile(w, r) {
			return
		}
		var doc *map[string]any
		switch {
		case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"):
			doc = h.prm.Load()
		case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-authorization-server"):
			doc = h.asMeta.Load()
		}
		if doc == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(*doc)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// client reaches every host at the site's server, as DNS pointing example.com at it would.
func (h *hostileSite) client() *http.Client {
	tr := h.srv.Client().Transport.(*http.Transport).Clone()
	addr := h.srv.Listener.Addr().String()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	tr.TLSClientConfig.ServerName = "example.com"
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (h *hostileSite) discover(t *testing.T, b Backend) (*discovered, error) {
	t.Helper()
	b.Name = "hostile"
	x := &discoverer{b: &b, client: h.client(), now: time.Now}
	return x.discover(t.Context())
}

// TestMetadataCannotPointInward: an authorization server (or a backend's resource metadata)
// that is not on this machine cannot name, as an endpoint the gateway sends codes, secrets or
// tokens to, a loopback host (the gateway's own listeners and whatever else listens there) or a
// link-local, unspecified or multicast address (the cloud metadata service), in any spelling;
// other hosts, private addresses among them, stay usable.
func TestMetadataCannotPointInward(t *testing.T) {
	t.Parallel()
	h := startHostileSite(t)
	const issuer = "https://example.com"
	meta := func(token, registration string) {
		m := map[string]any{"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": token,
			"code_challenge_methods_supported": []string{"S256"}, "registration_endpoint": registration}
		h.asMeta.Store(&m)
	}
	inward := []string{"http://127.0.0.1:9090/useroauth/revoke", "https://127.0.0.1/token", "https://127.1.2.3/token",
		"https://[::1]/token", "https://localhost/token", "http://LOCALHOST:8080/token", "https://[::ffff:127.0.0.1]/token",
		"https://169.254.169.254/latest/meta-data", "https://[fe80::1]/token", "https://0.0.0.0/token", "https://[::]/token",
		"https://224.0.0.1/token", "https://[::ffff:169.254.169.254]/token",
		// Spellings some resolver takes to loopback: inet_aton's shorthand, names under localhost.
		"https://127.1/token", "https://2130706433/token", "https://0x7f.1/token", "https://localhost./token",
		"https://sub.localhost/token", "https://[::1%25lo]/token"}
	for _, ep := range inward {
		meta(ep, issuer+"/register")
		if _, err := h.discover(t, Backend{URL: issuer + "/mcp", AuthServer: issuer}); !errors.Is(err, ErrAuthServer) ||
			!strings.Contains(err.Error(), "token_endpoint") {
			t.Errorf("token endpoint %s: %v; want refused", ep, err)
		}
		meta(issuer+"/token", ep)
		if d, err := h.discover(t, Backend{URL: issuer + "/mcp", AuthServer: issuer}); err != nil || d.as.RegistrationEndpoint != "" {
			t.Errorf("registration endpoint %s: %v, %v; want it treated as absent", ep, d, err)
		}
	}
	for _, ep := range []string{"https://tokens.example.net/token", "https://10.0.0.5/token", "https://192.168.1.10:8443/token"} {
		meta(ep, "")
		if d, err := h.discover(t, Backend{URL: issuer + "/mcp", AuthServer: issuer}); err != nil || d.as.TokenEndpoint != ep {
			t.Errorf("token endpoint %s: %v; want accepted", ep, err)
		}
	}
	// The backend's resource metadata cannot name an authorization server on this machine.
	for _, as := range []string{"http://127.0.0.1:9090", "https://localhost", "https://169.254.169.254"} {
		prm := map[string]any{"resource": issuer + "/mcp", "authorization_servers": []string{as}}
		h.prm.Store(&prm)
		if _, err := h.discover(t, Backend{URL: issuer + "/mcp"}); !errors.Is(err, ErrAuthServer) || !strings.Contains(err.Error(), "authorization server it lists") {
			t.Errorf("resource metadata listing %s: %v; want refused", as, err)
		}
	}
}

// TestDefaultClientRefusesLinkLocal: the client the gateway reaches authorization servers with
// does not connect to a link-local, unspecified or multicast address, however it was named, nor
// to loopback under a name that is not loopback's own, and follows no redirect.
func TestDefaultClientRefusesLinkLocal(t *testing.T) {
	t.Parallel()
	c := defaultHTTPClient(dialPolicy(nil, nil))
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]:80/", "http://0.0.0.0:1/",
		"http://[::ffff:169.254.169.254]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[::ffff:127.0.0.1]:1/", "http://224.0.0.1/"} {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := c.Do(req)
		cancel()
		if err == nil {
			_ = resp.Body.Close()
		}
		if !errors.Is(err, egress.ErrRefused) {
			t.Errorf("%s: %v; want refused", u, err)
		}
	}
	if c.CheckRedirect == nil || c.CheckRedirect(nil, nil) != http.ErrUseLastResponse {
		t.Error("the default client follows redirects")
	}
}

// TestLearntNamesJudgedByAddress: an endpoint a backend's or an authorization server's metadata
// names by a public name is held to the rule of the address the name resolves to, on the
// connection itself: a name resolving to loopback (as an A record or IPv4-mapped in an AAAA)
// or to the metadata service is refused by the default client, for the authorization server a
// backend lists, its token endpoint and its registration endpoint, before anything is sent,
// and the error names the host; the same server under the host the operator configured is
// reached.
func TestLearntNamesJudgedByAddress(t *testing.T) {
	t.Parallel()
	h := startHostileSite(t)
	port := h.srv.Listener.Addr().(*net.TCPAddr).Port
	r := dnstest.Hostile(t)
	issuer := fmt.Sprintf("https://example.com:%d", port)
	at := func(host, path string) string { return fmt.Sprintf("https://%s:%d%s", host, port, path) }
	// The default client as New builds it for this backend, asking the test's DNS server and
	// trusting the site's certificate (for example.com).
	// (The certificate is checked as example.com's whatever the name, so that a connection
	// the policy lets through reaches the site.)
	b := Backend{Name: "hostile", URL: issuer + "/mcp", AuthServer: issuer, Timeout: 5 * time.Second}
	clientFor := func(cfg Config) *http.Client {
		pol := dialPolicy([]Backend{b}, cfg.allowPrefixes())
		c := defaultHTTPClient(pol)
		tr := c.Transport.(*http.Transport)
		tr.DialContext = pol.Dial(&net.Dialer{Resolver: r})
		dnstest.TrustSite(tr, h.srv, "example.com")
		return c
	}
	c := clientFor(Config{})
	discover := func(b Backend) (*discovered, error) {
		x := &discoverer{b: &b, client: c, now: time.Now}
		return x.discover(t.Context())
	}
	a := &asClient{http: c, now: time.Now}
	refused := func(err error, host string) bool {
		return errors.Is(err, ErrAuthServer) && strings.Contains(err.Error(), "not connecting to "+host+":")
	}
	for _, host := range []string{"loopback.example.net", "mapped.example.net", "meta.example.net"} {
		m := map[string]any{"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": at(host, "/token"),
			"code_challenge_methods_supported": []string{"S256"}, "registration_endpoint": at(host, "/register")}
		h.asMeta.Store(&m)
		d, err := discover(b)
		if err != nil {
			t.Fatalf("%s: discovery: %v", host, err)
		}
		if _, err := a.tokenRequest(t.Context(), &d.as, client{ID: "c", Secret: "s3cret"}, url.Values{"code": {"the-code"}}); !refused(err, host) ||
			strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "the-code") {
			t.Errorf("token endpoint on %s: %v; want refused, naming the host and nothing sent", host, err)
		}
		if _, _, err := a.postJSON(t.Context(), d.as.RegistrationEndpoint, []byte("{}")); !refused(err, host) {
			t.Errorf("registration endpoint on %s: %v; want refused", host, err)
		}
		// The backend's resource metadata lists an authorization server under that name.
		prm := map[string]any{"resource": issuer + "/mcp", "authorization_servers": []string{at(host, "")}}
		h.prm.Store(&prm)
		if _, err := discover(Backend{Name: "hostile", URL: issuer + "/mcp", Timeout: 5 * time.Second}); !refused(err, host) {
			t.Errorf("authorization server on %s: %v; want refused", host, err)
		}
	}
	if n := h.requests.Load(); n != 0 {
		t.Errorf("%d requests reached the site under a refused name", n)
	}
	// The operator's host, resolving to the same address, is reached.
	m := map[string]any{"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": at("example.com", "/token"),
		"code_challenge_methods_supported": []string{"S256"}}
	h.asMeta.Store(&m)
	if d, err := discover(b); err != nil || d.as.TokenEndpoint != at("example.com", "/token") {
		t.Fatalf("the operator's host: %v, %v", d, err)
	}
	// userOAuth.allowAddresses lets exactly the deployment's addresses through, under any name.
	allowing := &asClient{http: clientFor(Config{AllowAddresses: []string{"127.0.0.1"}}), now: time.Now}
	if _, _, err := allowing.postJSON(t.Context(), at("loopback.example.net", "/register"), []byte("{}")); errors.Is(err, egress.ErrRefused) ||
		strings.Contains(fmt.Sprint(err), "not connecting") || h.requests.Load() != 1 {
		t.Errorf("loopback.example.net with 127.0.0.1 allowed: %v, %d requests; want it reached", err, h.requests.Load())
	}
	if _, _, err := allowing.postJSON(t.Context(), at("meta.example.net", "/register"), []byte("{}")); !refused(err, "meta.example.net") {
		t.Errorf("meta.example.net with 127.0.0.1 allowed: %v; want refused", err)
	}
}

// TestAllowAddressesChecked: each userOAuth.allowAddresses entry must be a CIDR or an address;
// one that is not is reported under its index.
func TestAllowAddressesChecked(t *testing.T) {
	t.Parallel()
	err := Config{AllowAddresses: []string{"127.0.0.0/8", "localhost", "10.0.0.1", "fe80::1%eth0", "::1/129"}}.WithDefaults().Validate()
	for _, want := range []string{"userOAuth.allowAddresses[1]", "userOAuth.allowAddresses[3]", "userOAuth.allowAddresses[4]"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v; want a problem at %s", err, want)
		}
	}
	for _, good := range []string{"allowAddresses[0]", "allowAddresses[2]"} {
		if err != nil && strings.Contains(err.Error(), good) {
			t.Errorf("%v; %s is valid", err, good)
		}
	}
}

// TestListedScopesAreScopeTokens: the scopes a backend's resource metadata lists are asked of
// the authorization server and shown on the connect page; each must be one scope token, so the
// page shows what is asked ("notes admin" would be one scope on the page and two at the
// server), and there are at most maxScopes of them.
func TestListedScopesAreScopeTokens(t *testing.T) {
	t.Parallel()
	h := startHostileSite(t)
	const issuer = "https://example.com"
	m := map[string]any{"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
		"code_challenge_methods_supported": []string{"S256"}}
	h.asMeta.Store(&m)
	many := make([]string, maxScopes+1)
	for i := range many {
		many[i] = "s" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
	}
	for _, scopes := range [][]string{{"notes admin"}, {"notes", ""}, {"a\x00b"}, {"caf\u00e9"}, {`a"b`}, {`a\b`},
		{"notes\tadmin"}, {strings.Repeat("s", 257)}, many} {
		prm := map[string]any{"resource": issuer + "/mcp", "authorization_servers": []string{issuer}, "scopes_supported": scopes}
		h.prm.Store(&prm)
		if _, err := h.discover(t, Backend{URL: issuer + "/mcp"}); !errors.Is(err, ErrAuthServer) || !strings.Contains(err.Error(), "scope") {
			t.Errorf("scopes %q: %v; want refused", scopes[0], err)
		}
	}
	prm := map[string]any{"resource": issuer + "/mcp", "authorization_servers": []string{issuer},
		"scopes_supported": []string{"openid", "notes:read", "https://example.com/auth/x"}}
	h.prm.Store(&prm)
	if d, err := h.discover(t, Backend{URL: issuer + "/mcp"}); err != nil || len(d.scopes) != 3 {
		t.Errorf("valid scopes: %v, %v", d, err)
	}
	for _, sc := range []string{"caf\u00e9", "a\x01b"} {
		b := Backend{Name: "x", ClientID: "c", Scopes: []string{sc}}
		if errs := b.Problems(); len(errs) != 1 {
			t.Errorf("configured scope %q: %v; want refused", sc, errs)
		}
	}
}

// serveHostile serves the answers of an authorization server that never ends or never stops
// growing, under /hostile/: a JSON document larger than any bound (big), a body that never
// ends (endless), and one that trickles a byte at a time (drip). It reports whether it served.
func serveHostile(w http.ResponseWriter, r *http.Request) bool {
	kind, ok := strings.CutPrefix(r.URL.Path, "/hostile/")
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	switch kind {
	case "big":
		_, _ = w.Write([]byte(`{"access_token":"` + strings.Repeat("a", 1<<20) + `","token_type":"Bearer","issuer":"x"}`))
	case "endless", "drip":
		_, _ = w.Write([]byte(`{"a":"`))
		chunk := []byte(strings.Repeat("a", 32<<10))
		if kind == "drip" {
			chunk = chunk[:1]
		}
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return true
			}
			w.(http.Flusher).Flush()
			if kind == "drip" {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	return true
}

// TestAnswersBounded: whatever a backend's metadata or an authorization server answers, the
// gateway reads a bounded amount within a bounded time: a document larger than the bound, a
// body that never ends and one that trickles are each an error wrapping ErrAuthServer, for the
// metadata and for the token, registration and revocation endpoints alike; except that a token
// endpoint's HTTP 200 answer over the bound is an oversize unusableError, whose caller tells
// whether it is one user's or the server's (oversizeAnswered).
func TestAnswersBounded(t *testing.T) {
	t.Parallel()
	h := startHostileSite(t)
	const site = "https://example.com/hostile/"
	a := &asClient{http: h.client(), now: time.Now}
	for _, kind := range []string{"big", "endless", "drip"} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second) // the backend's timeout
		done := make(chan error, 4)
		go func() {
			x := &discoverer{b: &Backend{Name: "hostile"}, client: h.client(), now: time.Now}
			var m asMetadata
			done <- x.fetchJSON(ctx, site+kind, &m)
			_, err := a.tokenRequest(ctx, &asMetadata{TokenEndpoint: site + kind}, client{ID: "c"}, url.Values{})
			done <- err
			_, _, err = a.postJSON(ctx, site+kind, []byte("{}"))
			done <- err
			done <- a.revoke(ctx, &asMetadata{RevocationEndpoint: site + kind}, client{ID: "c"}, "t", "access_token")
		}()
		for i := range 4 {
			select {
			case err := <-done:
				var u *unusableError
				if i == 1 && kind != "drip" && errors.As(err, &u) && u.oversize {
					continue
				}
				if !errors.Is(err, ErrAuthServer) {
					t.Errorf("%s answer, request %d: %v; want ErrAuthServer", kind, i, err)
				}
			case <-time.After(time.Minute): // a liveness bound, far above the 1 s deadline
				t.Fatalf("%s answer, request %d: still reading", kind, i)
			}
		}
		cancel()
	}
}

// TestServerMetadataChecked: what docs/user-oauth.md requires of an authorization server's
// metadata before the gateway uses it: it names the configured issuer exactly (RFC 8414 §3.3,
// against mix-up), it supports PKCE with S256, and its endpoints are https; and the backend's
// resource metadata names the configured resource. Each is refused as the server being
// unavailable; the same metadata, right, is accepted.
func TestServerMetadataChecked(t *testing.T) {
	t.Parallel()
	h := startHostileSite(t)
	const issuer = "https://example.com"
	good := func() map[string]any {
		return map[string]any{"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
			"code_challenge_methods_supported": []string{"S256"}}
	}
	b := Backend{URL: issuer + "/mcp", AuthServer: issuer}
	for name, change := range map[string]func(m map[string]any){
		"another issuer":         func(m map[string]any) { m["issuer"] = "https://example.com/other" },
		"issuer with a slash":    func(m map[string]any) { m["issuer"] = issuer + "/" },
		"PKCE plain only":        func(m map[string]any) { m["code_challenge_methods_supported"] = []string{"plain"} },
		"no PKCE":                func(m map[string]any) { delete(m, "code_challenge_methods_supported") },
		"token endpoint in http": func(m map[string]any) { m["token_endpoint"] = "http://example.com/token" },
		"authorize in http":      func(m map[string]any) { m["authorization_endpoint"] = "http://example.com/authorize" },
	} {
		t.Run(name, func(t *testing.T) {
			m := good()
			change(m)
			h.asMeta.Store(&m)
			if _, err := h.discover(t, b); !errors.Is(err, ErrAuthServer) {
				t.Fatalf("%v, want refused as ErrAuthServer", err)
			}
		})
	}
	m := good()
	h.asMeta.Store(&m)
	if _, err := h.discover(t, b); err != nil {
		t.Fatalf("the good metadata: %v", err)
	}
	prm := map[string]any{"resource": "https://example.com/other", "authorization_servers": []string{issuer}}
	h.prm.Store(&prm)
	if _, err := h.discover(t, Backend{URL: issuer + "/mcp"}); !errors.Is(err, ErrAuthServer) {
		t.Fatalf("resource metadata for another resource: %v, want refused", err)
	}
}

// TestProbeAuthServerTrustsEveryBackend: check-config's probe of one per-user OAuth backend
// trusts, as the Service does (defaultClient over all its backends), the hosts of every
// configured backend. A real backend on loopback lists its authorization server at another
// configured backend's host, [::ffff:127.0.0.1] (loopback, but no loopback name, so trusted
// only as a host the operator configured): with that backend configured, the probe connects
// to the server there (and stops at its certificate, which nothing trusts); without it, the
// probe refuses it before connecting, naming the host.
func TestProbeAuthServerTrustsEveryBackend(t *testing.T) {
	t.Parallel()
	host, conns := dnstest.UntrustedSite(t)
	mapped := "https://" + host
	var backendURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": backendURL, "authorization_servers": []string{mapped}})
	}))
	t.Cleanup(srv.Close)
	backendURL = srv.URL + "/mcp"
	local := Backend{Name: "local", URL: backendURL, Timeout: 5 * time.Second}
	other := Backend{Name: "other", URL: mapped + "/mcp", Timeout: 5 * time.Second}
	for _, tt := range []struct {
		name     string
		backends []Backend
		connects bool
	}{
		{"the server's host configured", []Backend{local, other}, true},
		{"the server's host not configured", []Backend{local}, false},
	} {
		before := conns.Load()
		_, err := ProbeAuthServer(t.Context(), Config{}, tt.backends, 0)
		if err == nil {
			t.Fatalf("%s: the probe passed an authorization server whose certificate nothing trusts", tt.name)
		}
		connected := conns.Load() > before
		refused := strings.Contains(err.Error(), "not connecting to ::ffff:127.0.0.1")
		if connected != tt.connects || refused == tt.connects || !errors.Is(err, ErrAuthServer) {
			t.Errorf("%s: %v, connected %v; want connected %v, refused %v", tt.name, err, connected, tt.connects, !tt.connects)
		}
	}
}

// TestDiscoveryErrorsBoundWhatTheyRepeat: a discovery refusal names what the documents said
// (the issuer, the resource, an endpoint's host) so the operator sees why, but only in part: a
// backend or authorization server that fills a document with one huge value does not make each
// log line of each call and connect that fails on it as long as the document.
func TestDiscoveryErrorsBoundWhatTheyRepeat(t *testing.T) {
	t.Parallel()
	h := startHostileSite(t)
	const issuer = "https://example.com"
	huge := strings.Repeat("\xff", maxMetadataBytes/8) // each byte quoted as \xff
	longHost := strings.Repeat("a", maxMetadataBytes/4) + ".localhost"
	good := func() map[string]any {
		return map[string]any{"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
			"code_challenge_methods_supported": []string{"S256"}}
	}
	for _, tt := range []struct {
		name     string
		b        Backend
		prm, asm func(m map[string]any)
	}{
		{"issuer", Backend{URL: issuer + "/mcp", AuthServer: issuer}, nil, func(m map[string]any) { m["issuer"] = issuer + "/" + huge }},
		{"token endpoint host", Backend{URL: issuer + "/mcp", AuthServer: issuer}, nil,
			func(m map[string]any) { m["token_endpoint"] = "https://" + longHost + "/token" }},
		{"token endpoint scheme", Backend{URL: issuer + "/mcp", AuthServer: issuer}, nil,
			func(m map[string]any) {
				m["token_endpoint"] = strings.Repeat("x", maxMetadataBytes/4) + "://example.com/token"
			}},
		{"resource", Backend{URL: issuer + "/mcp"}, func(m map[string]any) { m["resource"] = issuer + "/" + huge }, nil},
		{"authorization server", Backend{URL: issuer + "/mcp"},
			func(m map[string]any) { m["authorization_servers"] = []string{"https://" + longHost} }, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prm, asm := map[string]any{"resource": issuer + "/mcp", "authorization_servers": []string{issuer}}, good()
			if tt.prm != nil {
				tt.prm(prm)
			}
			if tt.asm != nil {
				tt.asm(asm)
			}
			h.prm.Store(&prm)
			h.asMeta.Store(&asm)
			_, err := h.discover(t, tt.b)
			if !errors.Is(err, ErrAuthServer) {
				t.Fatalf("%v, want refused as ErrAuthServer", err)
			}
			if n := len(err.Error()); n > 4*maxShownBytes+512 { // a quoted byte is at most 4
				t.Errorf("the refusal is %d bytes long, want the document's values cut to %d bytes each", n, maxShownBytes)
			}
		})
	}
}
