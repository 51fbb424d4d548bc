package upstreams

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestEraProbeRateLimited: a backend that answers 429 to everything, its era probe included,
// is throttling, not failing: each call is ErrRateLimited (never a bad response), the probe is
// not backed off (the next call probes again, at once), 20 such calls open no circuit (whose
// threshold is 2) and leave the backend up, and when the backend stops throttling the next
// call learns the era and is served, with no clock moved.
func TestEraProbeRateLimited(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		start := mcptest.StartServer
		if legacy {
			start = mcptest.StartLegacyServer
		}
		backend := start(t, "alpha")
		proxy := startFlakyProxy(t, backend.URL())
		proxy.fail(http.StatusTooManyRequests, false)
		var probes atomic.Int64
		r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: proxy.url,
			Breaker: BreakerConfig{Failures: 2, Cooldown: time.Hour}}}}, Options{
			Observe: func(_, method, _ string, _ time.Duration) {
				if method == MethodDiscover {
					probes.Add(1)
				}
			}})
		ctx := context.Background()
		for i := range 20 {
			err := callAs(ctx, r, mcptest.ToolEcho, `{"text":"x"}`, "", "")
			var rl *RateLimitError
			if !errors.As(err, &rl) || errors.Is(err, ErrBadResponse) || errors.Is(err, ErrUnavailable) || rl.RetryAfter != time.Second {
				t.Fatalf("legacy=%v: call %d: err = %v, want the backend's 429 alone, to retry after 1s", legacy, i, err)
			}
		}
		if n := probes.Load(); n != 20 {
			t.Errorf("legacy=%v: %d era probes for 20 throttled calls, want one each (no backoff)", legacy, n)
		}
		for _, s := range r.Health() {
			if !s.Up {
				t.Errorf("legacy=%v: %s down after 429s: %s", legacy, s.Name, s.LastError)
			}
		}
		proxy.fail(0, false)
		if err := callAs(ctx, r, mcptest.ToolEcho, `{"text":"x"}`, "", ""); err != nil {
			t.Fatalf("legacy=%v: the call once the backend stops throttling: %v", legacy, err)
		}
	}
}
