package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/store"
)

type failingLimiter struct{ err error }

func (f failingLimiter) Allow(context.Context, string, store.Limit) (store.RateDecision, error) {
	return store.RateDecision{}, f.err
}

// TestRateLimitStoreErrorsLogged: a store that fails is logged on each call, but not while its
// circuit breaker skips Redis (the breaker logs its state changes; a line per call would flood
// the log at full request rate). Either way the call follows FailOpen.
func TestRateLimitStoreErrorsLogged(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		logged bool
	}{
		{"redis timed out", errors.New("i/o timeout"), true},
		{"breaker open", store.ErrSkipped, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			x := &request{shared: shared{ctx: context.Background(), s: &Server{
				log:  slog.New(slog.NewTextHandler(&buf, nil)),
				rate: RateLimits{Store: failingLimiter{tt.err}, FailOpen: true},
			}}}
			if err := x.takeToken("c|someone", store.Limit{}); err != nil {
				t.Fatalf("fail-open limit refused: %v", err)
			}
			if got := strings.Contains(buf.String(), "rate limit store unavailable"); got != tt.logged {
				t.Errorf("logged %v, want %v: %q", got, tt.logged, buf.String())
			}
		})
	}
}
