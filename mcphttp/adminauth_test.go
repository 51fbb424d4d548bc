package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

const testAdminToken = "an-admin-token-for-tests-only-0123456789"

// adminExchange sends one request to a, with the bearer token when tok is not empty.
func adminExchange(a *Admin, method, path, host, tok string) *httptest.ResponseRecorder {
	e := echo.New()
	a.Register(e)
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{}`)
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequest(method, path, body)
	req.Host = host
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// TestAdminCredential: on an admin listener that is not loopback-only, every endpoint that reveals
// configuration, tool inventory or process internals answers only with the admin token (401 and
// a Bearer challenge without it or with another), /healthz and the status of /readyz answer
// anyone, the detail of /readyz only the admin, and pprof nobody; without a token configured
// such a listener refuses them all (403). On a loopback-only listener without a token they are
// served as before.
func TestAdminCredential(t *testing.T) {
	down := Check{Name: "redis", Run: func(context.Context) error { return errors.New("dial tcp 10.0.0.7:6379: refused") }}
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "admin_test_inventory_total", Help: "A series."}))
	deps := func(loopback bool, token string) AdminDeps {
		return AdminDeps{Gatherer: reg, Checks: []Check{down}, Pprof: true,
			Explain: true, Loopback: loopback, Token: token}
	}
	tests := []struct {
		name           string
		deps           AdminDeps
		host, tok      string
		method, path   string
		status         int
		detail, denied bool
	}{
		{"healthz without token", deps(false, testAdminToken), "10.0.0.1:9090", "", "GET", "/healthz", 200, false, false},
		{"readyz without token: status only", deps(false, testAdminToken), "10.0.0.1:9090", "", "GET", "/readyz", 503, false, false},
		{"readyz with token: detail", deps(false, testAdminToken), "10.0.0.1:9090", testAdminToken, "GET", "/readyz", 503, true, false},
		{"readyz with another token: status only", deps(false, testAdminToken), "10.0.0.1:9090", "nope", "GET", "/readyz", 503, false, false},
		{"metrics without token", deps(false, testAdminToken), "10.0.0.1:9090", "", "GET", "/metrics", 401, false, true},
		{"metrics with another token", deps(false, testAdminToken), "10.0.0.1:9090", testAdminToken + "x", "GET", "/metrics", 401, false, true},
		{"metrics with token", deps(false, testAdminToken), "10.0.0.1:9090", testAdminToken, "GET", "/metrics", 200, false, false},
		{"explain without token", deps(false, testAdminToken), "10.0.0.1:9090", "", "POST", "/authz/explain", 401, false, true},
		// Authentication is off in these deps, so an authorized explain reaches "disabled".
		{"explain with token", deps(false, testAdminToken), "10.0.0.1:9090", testAdminToken, "POST", "/authz/explain", 404, false, false},
		{"pprof without token", deps(false, testAdminToken), "10.0.0.1:9090", "", "GET", "/debug/pprof/", 403, false, true},
		{"pprof with token off loopback", deps(false, testAdminToken), "10.0.0.1:9090", testAdminToken, "GET", "/debug/pprof/", 403, false, true},
		{"no token configured: metrics", deps(false, ""), "10.0.0.1:9090", "", "GET", "/metrics", 403, false, true},
		{"no token configured: readyz status only", deps(false, ""), "10.0.0.1:9090", "", "GET", "/readyz", 503, false, false},
		{"loopback without token: metrics", deps(true, ""), "127.0.0.1:9090", "", "GET", "/metrics", 200, false, false},
		{"loopback without token: readyz detail", deps(true, ""), "127.0.0.1:9090", "", "GET", "/readyz", 503, true, false},
		{"loopback without token: pprof", deps(true, ""), "127.0.0.1:9090", "", "GET", "/debug/pprof/", 200, false, false},
		{"loopback with token: pprof needs it", deps(true, testAdminToken), "127.0.0.1:9090", "", "GET", "/debug/pprof/", 401, false, true},
		{"loopback with token: pprof", deps(true, testAdminToken), "127.0.0.1:9090", testAdminToken, "GET", "/debug/pprof/", 200, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAdmin(tt.deps)
			a.SetReady(true)
			rec := adminExchange(a, tt.method, tt.path, tt.host, tt.tok)
			body := rec.Body.String()
			if rec.Code != tt.status {
				t.Fatalf("%s %s: %d %s, want %d", tt.method, tt.path, rec.Code, body, tt.status)
			}
			if got := strings.Contains(body, "10.0.0.7"); got != tt.detail {
				t.Errorf("readiness detail shown %v, want %v: %s", got, tt.detail, body)
			}
			if got := strings.Contains(body, "admin_test_inventory_total"); got != (tt.path == "/metrics" && !tt.denied) {
				t.Errorf("metrics shown %v: %s", got, body)
			}
			if challenge := rec.Header().Get("WWW-Authenticate"); (rec.Code == 401) != (challenge != "") {
				t.Errorf("status %d with WWW-Authenticate %q", rec.Code, challenge)
			}
		})
	}
}
