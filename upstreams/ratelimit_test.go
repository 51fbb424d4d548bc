package upstreams

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestEraProbeRateLimited: a backend that answers 429 to everything, its era probe included,
// is throttling, not failing: its first 429 (no Retry-After: a wait of 1 s) is ErrRateLimited
// (never a bad response), and until the wait passes the next 19 calls are refused unsent
// (ErrRateLimitWait, with the wait left), so 20 calls send it one request, open no circuit
// (whose threshold is 2) and leave the backend up; once the backend stops throttling, the calls
// still wait out the wait, and then the next learns the era and is served.
func TestEraProbeRateLimited(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		start := mcptest.StartServer
		if legacy {
			start = mcptest.StartLegacyServer
		}
		backend := start(t, "alpha")
		proxy := startFlakyProxy(t, backend.URL())
		proxy.fail(http.StatusTooManyRequests, false)
		clock := newTestClock()
		r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: proxy.url,
			Breaker: BreakerConfig{Failures: 2, Cooldown: time.Hour}}}}, Options{Clock: clock.Now})
		ctx := context.Background()
		for i := range 20 {
			err := callAs(ctx, r, mcptest.ToolEcho, `{"text":"x"}`, "", "")
			var rl *RateLimitError
			if !errors.As(err, &rl) || errors.Is(err, ErrBadResponse) || errors.Is(err, ErrUnavailable) || rl.RetryAfter != time.Second ||
				errors.Is(err, ErrRateLimitWait) != (i > 0) {
				t.Fatalf("legacy=%v: call %d: err = %v, want the backend's 429, then its wait, of 1s", legacy, i, err)
			}
		}
		if n := proxy.failed.Load(); n != 1 {
			t.Errorf("legacy=%v: the backend got %d requests for 20 calls, want 1: the rest wait out its 429", legacy, n)
		}
		for _, s := range r.Health() {
			if !s.Up {
				t.Errorf("legacy=%v: %s down after 429s: %s", legacy, s.Name, s.LastError)
			}
		}
		proxy.fail(0, false)
		clock.Advance(time.Second / 2)
		var rl *RateLimitError
		if err := callAs(ctx, r, mcptest.ToolEcho, `{"text":"x"}`, "", ""); !errors.Is(err, ErrRateLimitWait) || !errors.As(err, &rl) ||
			rl.RetryAfter != time.Second/2 {
			t.Fatalf("legacy=%v: a call within the wait: %v, want ErrRateLimitWait with 500ms left", legacy, err)
		}
		clock.Advance(time.Second / 2)
		if err := callAs(ctx, r, mcptest.ToolEcho, `{"text":"x"}`, "", ""); err != nil {
			t.Fatalf("legacy=%v: the call once the wait passed: %v", legacy, err)
		}
	}
}
