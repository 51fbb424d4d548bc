package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestReadyzChecks: a failing check makes the replica not ready unless it is advisory, and is
// reported either way, any URL in its error quoted as configerr.URL quotes it; a draining
// replica is not ready whatever its checks say.
func TestReadyzChecks(t *testing.T) {
	down := func(context.Context) error { return errors.New("dial tcp: connection refused") }
	up := func(context.Context) error { return nil }
	tests := []struct {
		name      string
		serving   bool
		checks    []Check
		status    int
		wantCheck string
	}{
		{"passing", true, []Check{{Name: "redis", Run: up}}, http.StatusOK, "ok"},
		{"failing", true, []Check{{Name: "redis", Run: down}}, http.StatusServiceUnavailable, "dial tcp: connection refused"},
		{"failing advisory", true, []Check{{Name: "redis", Run: down, Advisory: true}}, http.StatusOK, "dial tcp: connection refused"},
		{"advisory and required", true, []Check{{Name: "redis", Run: down, Advisory: true}, {Name: "other", Run: down}},
			http.StatusServiceUnavailable, "dial tcp: connection refused"},
		{"draining", false, []Check{{Name: "redis", Run: down, Advisory: true}}, http.StatusServiceUnavailable, "dial tcp: connection refused"},
		// A client's error repeats the URL it was sent to, credentials and all.
		{"failing, quoting a URL", true, []Check{{Name: "redis", Run: func(context.Context) error {
			return errors.New(`Get "http://u:K1@h/hook/K2?key=K3": dial tcp: connection refused`)
		}}}, http.StatusServiceUnavailable, `Get "http://REDACTED@h/hook/REDACTED?key=REDACTED": dial tcp: connection refused`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAdmin(AdminDeps{Checks: tt.checks, Token: testAdminToken})
			a.SetReady(tt.serving)
			e := echo.New()
			a.Register(e)
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/readyz", nil)
			req.Header.Set("Authorization", "Bearer "+testAdminToken)
			e.ServeHTTP(rec, req)
			var body readiness
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("/readyz body %q: %v", rec.Body, err)
			}
			if rec.Code != tt.status || body.Ready != (tt.status == http.StatusOK) {
				t.Errorf("/readyz %d ready=%v, want %d", rec.Code, body.Ready, tt.status)
			}
			if got := body.Checks["redis"]; got != tt.wantCheck {
				t.Errorf("redis check %q, want %q", got, tt.wantCheck)
			}
		})
	}
}

// TestAdminLoopbackHost: on a loopback admin listener a request naming another host is refused
// (DNS rebinding), while one naming a loopback host, or none at all (an HTTP/1.0 health check
// such as HAProxy's, which no browser sends), is served.
func TestAdminLoopbackHost(t *testing.T) {
	a := NewAdmin(AdminDeps{Loopback: true})
	a.SetReady(true)
	e := echo.New()
	a.Register(e)
	for host, want := range map[string]int{
		"127.0.0.1:9090": http.StatusOK, "localhost:9090": http.StatusOK, "[::1]:9090": http.StatusOK,
		"": http.StatusOK, "rebind.example:9090": http.StatusForbidden,
	} {
		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
	}
}
