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
// reported either way; a draining replica is not ready whatever its checks say.
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAdmin(AdminDeps{Checks: tt.checks})
			a.SetReady(tt.serving)
			e := echo.New()
			a.Register(e)
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
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
