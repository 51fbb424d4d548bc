package upstreams

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// newTestClock returns the manual clock the upstreams tests inject.
func newTestClock() *mcptest.Clock {
	return mcptest.NewClock(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC))
}

// stateLog records the circuit states reported through Options.CircuitState.
type stateLog struct {
	mu     sync.Mutex
	states []int
}

func (l *stateLog) hook(_ string, s int) {
	l.mu.Lock()
	l.states = append(l.states, s)
	l.mu.Unlock()
}

func (l *stateLog) get() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.states...)
}

// TestBreakerThroughRegistry drives a real backend: it fails, the circuit opens and calls stop
// reaching it, the cooldown passes, the trial reaches it and, once it has recovered, closes the
// circuit.
func TestBreakerThroughRegistry(t *testing.T) {
	var hits atomic.Int64
	var healthy atomic.Bool
	srv := upstreamstest.Loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		hits.Add(1)
		if !healthy.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}`)
	}))
	clock := newTestClock()
	var log stateLog
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "fault", URL: srv + "/mcp", Protocol: ProtocolVersion,
		Breaker: BreakerConfig{Failures: 3, Cooldown: 10 * time.Second}}}},
		Options{Clock: clock.Now, CircuitState: log.hook})
	for i := range 3 {
		if _, err := faultCall(r, context.Background()); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("call %d = %v, want a plain ErrUnavailable", i, err)
		}
	}
	_, err := faultCall(r, context.Background())
	if !errors.Is(err, ErrCircuitOpen) || hits.Load() != 3 {
		t.Fatalf("4th call = %v after %d backend hits, want ErrCircuitOpen without a 4th hit", err, hits.Load())
	}
	if h := r.Health()[0]; !strings.Contains(h.LastError, "503") {
		t.Fatalf("health last error %q: the open circuit hid the backend's own error", h.LastError)
	}
	healthy.Store(true)
	clock.Advance(10 * time.Second)
	s, err := faultCall(r, context.Background())
	if err != nil {
		t.Fatalf("half-open trial: %v", err)
	}
	if err := drain(s); err != nil {
		t.Fatal(err)
	}
	if got := r.CircuitStates()["fault"]; got != CircuitClosed || hits.Load() != 4 {
		t.Fatalf("state %d after %d hits, want closed after the trial", got, hits.Load())
	}
	want := []int{CircuitClosed, CircuitOpen, CircuitHalfOpen, CircuitClosed}
	if got := log.get(); !equalInts(got, want) {
		t.Fatalf("reported states %v, want %v", got, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
