package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/dnstest"
)

// TestCheckConfigOnlineTrustsWhatServeTrusts: check-config --online probes an issuer and a
// per-user OAuth backend's authorization server with the clients serve builds for the whole
// configuration, which trust every configured issuer's and backend's host. An issuer on
// loopback names its key set, and a backend on loopback lists its authorization server, at
// [::ffff:127.0.0.1] (loopback, but no loopback name, so trusted only as a host the operator
// configured). With an issuer and a backend configured at that host, both probes connect there
// (and stop at a certificate nothing trusts), as serve's authenticator and connect page would;
// without them, both probes refuse it before connecting, as serve would.
func TestCheckConfigOnlineTrustsWhatServeTrusts(t *testing.T) {
	host, conns := dnstest.UntrustedSite(t)
	mapped := "https://" + host
	var near *httptest.Server
	near = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": near.URL, "jwks_uri": mapped + "/jwks"})
		case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"):
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": near.URL + "/mcp", "authorization_servers": []string{mapped}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(near.Close)
	write := func(configured bool) string {
		issuers, backends := `[{issuer: "`+near.URL+`"}]`, "  - {name: near, url: \""+near.URL+"/mcp\", timeout: 5s, auth: {type: userOAuth, clientID: c}}\n"
		if configured {
			issuers = `[{issuer: "` + near.URL + `"}, {issuer: "` + mapped + `"}]`
			backends += "  - {name: far, url: \"" + mapped + "/mcp\", timeout: 5s, auth: {type: userOAuth, clientID: c}}\n"
		}
		cfg := "server: {listen: \"127.0.0.1:0\", publicURL: \"" + testResource + "\"}\n" +
			"auth:\n  issuers: " + issuers + "\n  policy: {rules: [{id: all, issuers: [\"*\"]}]}\n" +
			"approval: {issuer: \"" + near.URL + "\", clientID: pages, clientSecret: {value: pages-secret}}\n" +
			"userOAuth: {keys: [{id: v1, secret: {value: " + strings.Repeat("v", 32) + "}}]}\n" +
			"upstreams:\n" + backends
		path := filepath.Join(t.TempDir(), "gateway.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	refusal := regexp.QuoteMeta("not connecting to ::ffff:127.0.0.1")
	issuerLine := `(?m)^FAILED auth\.issuers\[0\] ` + regexp.QuoteMeta(near.URL) + `: (.*)$`
	authLine := `(?m)^FAILED upstreams\[0\]\.auth near: (.*)$`
	for _, configured := range []bool{true, false} {
		before := conns.Load()
		// The lines not under test (the far issuer and backend themselves, the sign-in
		// issuer, the backends' own checks) fail too: nothing there holds a trusted certificate
		// or serves MCP.
		out, stderr, err := runGateway(t, "check-config", "--config", write(configured), "--online")
		if err == nil {
			t.Fatalf("configured %v: check-config --online passed:\n%s", configured, out)
		}
		if out == "" {
			t.Fatalf("configured %v: %v\n%s", configured, err, stderr)
		}
		for _, line := range []string{issuerLine, authLine} {
			m := regexp.MustCompile(line).FindStringSubmatch(out)
			if m == nil {
				t.Errorf("configured %v: output lacks %s:\n%s%s", configured, line, out, stderr)
				continue
			}
			if refused := regexp.MustCompile(refusal).MatchString(m[1]); refused == configured {
				t.Errorf("configured %v: %q; want refused %v, as serve would", configured, m[0], !configured)
			}
		}
		// Configured: the issuer's key set, the backend's server and the far items' own probes
		// connect; not configured: nothing does.
		if connected := conns.Load() > before; connected != configured {
			t.Errorf("configured %v: the far server saw connections %v", configured, connected)
		}
	}
}
