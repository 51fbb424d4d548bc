package upstreams

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestEraProbeFailureBackedOff: a backend whose server/discover answer names no era (a proxy in
// front of a real go-sdk server answers it 502) is probed once, not once per call: every call
// during the backoff fails at once with that answer as a clear error, concurrent callers
// included, and sends nothing to the backend. Once the backend answers again, the first call
// after the backoff probes, learns the era and goes through.
func TestEraProbeFailureBackedOff(t *testing.T) {
	backend := mcptest.StartServer(t, "alpha")
	proxy := startFlakyProxy(t, backend.URL())
	proxy.fail(http.StatusBadGateway, true)
	clock := &skewClock{}
	var probes atomic.Int64
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: proxy.url,
		Breaker: BreakerConfig{Disabled: true}}}}, Options{Clock: clock.Now,
		Observe: func(_, method, _ string, _ time.Duration) {
			if method == MethodDiscover {
				probes.Add(1)
			}
		}})
	ctx := context.Background()
	if err := callAs(ctx, r, mcptest.ToolEcho, `{"text":"x"}`, "", ""); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("first call: err = %v, want the probe's 502", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() { errs <- callAs(ctx, r, mcptest.ToolEcho, `{"text":"x"}`, "", "") })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "HTTP 502") ||
			!strings.Contains(err.Error(), "probes its protocol era again in") {
			t.Fatalf("call during the backoff: err = %v, want the probe's answer and when it is probed again", err)
		}
	}
	if n := probes.Load(); n != 1 {
		t.Fatalf("%d era probes for 21 calls, want 1", n)
	}
	if n := len(lastRequests(backend, MethodToolsCall)); n != 0 {
		t.Fatalf("%d calls reached a backend of unknown era", n)
	}
	proxy.fail(0, false)
	clock.Skip(probeBackoffCeiling)
	if err := callAs(ctx, r, mcptest.ToolEcho, `{"text":"x"}`, "", ""); err != nil {
		t.Fatalf("after the backoff, the recovered backend: %v", err)
	}
	if e := r.byName["alpha"].Era(); e != era.Modern || probes.Load() != 2 {
		t.Fatalf("era %d after %d probes, want modern after 2", e, probes.Load())
	}
}

// probeBackoffCeiling is the longest wait after a failed era probe (backend.probeBackoffMax).
const probeBackoffCeiling = 30 * time.Second

// lastRequests returns the requests of method a backend received.
func lastRequests(s *mcptest.Server, method string) []mcptest.Exchange {
	var out []mcptest.Exchange
	for _, ex := range s.Requests() {
		if ex.Header.Get("Mcp-Method") == method {
			out = append(out, ex)
		}
	}
	return out
}

// TestEraProbeFailureNamesTheAnswer: a backend whose server/discover answer is an HTTP error
// status carrying a JSON-RPC error outside the range that names the 2026 revision (an auth layer
// refusing the gateway's credentials, a proxy or a server failing, in front of a real go-sdk
// server) fails the call with an error that says what came back, the status and the code, and
// for a refusal (401, 403) where to look; it is what /readyz and check-config --online show.
func TestEraProbeFailureNamesTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		status, code int
		hint         string
	}{
		{http.StatusUnauthorized, -32001, "credentials"},
		{http.StatusForbidden, -32001, "credentials"},
		{http.StatusInternalServerError, -32603, ""},
		{http.StatusBadGateway, -32000, ""},
		{http.StatusTooManyRequests + 1, -32603, ""}, // 430: any other status
	} {
		backend := mcptest.StartServer(t, "alpha")
		proxy := startFlakyProxy(t, backend.URL())
		proxy.fail(tc.status, true)
		proxy.rpcCode = tc.code
		r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: proxy.url,
			Breaker: BreakerConfig{Disabled: true}}}}, Options{})
		err := callAs(context.Background(), r, mcptest.ToolEcho, `{"text":"x"}`, "", "")
		want := fmt.Sprintf("HTTP %d", tc.status)
		if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), fmt.Sprintf("JSON-RPC error %d", tc.code)) ||
			!strings.Contains(err.Error(), tc.hint) {
			t.Errorf("HTTP %d, JSON-RPC %d: err = %v, want a bad response naming %q, the code and %q",
				tc.status, tc.code, err, want, tc.hint)
		}
	}
}
