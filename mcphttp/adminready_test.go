package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestReadyzAnswersWithinItsBound: /readyz gives its checks one budget together, ReadyTimeout,
// which must sit inside the readiness probe's timeout (the chart checks its side,
// helm:TestReadinessProbeOutlastsReadyz). The checks run at once: two dependencies that do not
// answer (a Redis whose packets are dropped, and its notices) cost one budget, not one each.
// A check still running when the budget is spent is reported failed, and an advisory one still
// leaves the replica ready. Before, the checks ran one after another on a 2 s context, the
// chart's probe timeout: with Redis unreachable by a dropped SYN every probe timed out, and
// redisReadiness: advisory took every replica out of the load balancer all the same.
func TestReadyzAnswersWithinItsBound(t *testing.T) {
	if ReadyTimeout >= 2*time.Second {
		t.Fatalf("ReadyTimeout %v, want below the chart's readiness probe timeout (2 s)", ReadyTimeout)
	}
	var deadlines []time.Duration
	started := make(chan struct{})
	// waiter passes only if the other check runs at the same time; hung never answers and
	// ignores its context, as a dependency client without a deadline would.
	waiter := func(ctx context.Context) error {
		if d, ok := ctx.Deadline(); ok {
			deadlines = append(deadlines, time.Until(d))
		}
		select {
		case <-started:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	hung := func(context.Context) error {
		close(started)
		select {} // never answers
	}
	a := NewAdmin(AdminDeps{Token: testAdminToken, Checks: []Check{
		{Name: "issuers", Run: waiter},
		{Name: "redis", Run: hung, Advisory: true},
	}})
	a.SetReady(true)
	e := echo.New()
	a.Register(e)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/readyz", nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		e.ServeHTTP(rec, req)
	}()
	select {
	case <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("/readyz did not answer while a check hung")
	}
	var body readiness
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("/readyz body %q: %v", rec.Body, err)
	}
	if rec.Code != http.StatusOK || !body.Ready || body.Checks["issuers"] != "ok" || body.Checks["redis"] == "ok" || body.Checks["redis"] == "" {
		t.Errorf("/readyz %d %s, want 200 ready with issuers ok and the hung advisory redis check failed", rec.Code, rec.Body)
	}
	if len(deadlines) != 1 || deadlines[0] > ReadyTimeout {
		t.Errorf("the check's deadline was %v away, want at most ReadyTimeout (%v)", deadlines, ReadyTimeout)
	}
}
