package upstreams

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// outcomeLog records the outcomes Options.Observe reports for one method.
type outcomeLog struct {
	method string
	mu     sync.Mutex
	got    []string
}

func (l *outcomeLog) observe(_, method, outcome string, _ time.Duration) {
	if method != l.method {
		return
	}
	l.mu.Lock()
	l.got = append(l.got, outcome)
	l.mu.Unlock()
}

func (l *outcomeLog) outcomes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// TestListenBudgetEndIsNotABackendFailure: a backend listen stream the gateway ends because
// its budget of result bytes is spent (other responses hold it all, and the next event does not
// fit) is the gateway's overload, not the backend's failure. A healthy go-sdk backend, 2026-07-28
// and pre-2026, whose streams end so three times keeps a closed circuit (it opens on one failure
// here), and the stream's outcome is not a backend failure. Before, the budget error was
// classified as the backend being unavailable.
func TestListenBudgetEndIsNotABackendFailure(t *testing.T) {
	// The update's _meta makes it larger than the stream's buffer.
	const uri = "mem://r/a"
	pad := mcp.Meta{"pad": strings.Repeat("x", 8<<10)}
	for _, legacy := range []bool{false, true} {
		name := "2026-07-28"
		if legacy {
			name = "pre-2026"
		}
		t.Run(name, func(t *testing.T) {
			be := mcptest.StartServer(t, "be", mcptest.WithSubscriptions())
			if legacy {
				be = mcptest.StartLegacyServer(t, "be", mcptest.WithSubscriptions())
			}
			// Counts the listens the backend has taken the subscription of: a pre-2026 one
			// once it answered resources/subscribe, a 2026-07-28 one once it acknowledges.
			var subscribed atomic.Int64
			be.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if _, ok := req.(*mcp.SubscribeRequest); ok {
						defer subscribed.Add(1)
					}
					return next(ctx, method, req)
				}
			})
			be.MCP().AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if _, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
						defer subscribed.Add(1)
					}
					return next(ctx, method, req)
				}
			})
			var states stateLog
			outcomes := &outcomeLog{method: "subscriptions/listen"}
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "be", URL: be.URL(), Timeout: 5 * time.Second,
				Breaker: BreakerConfig{Failures: 1, Cooldown: time.Hour}}}},
				Options{MaxResultBytesInFlight: listenBudget, Observe: outcomes.observe, CircuitState: states.hook})
			ls := NewListens(r)
			for round := range 3 {
				l := startBudgetListen(ls, "idp#a", `"a"`, `{"resourceSubscriptions":[`+jsonQuote("be+"+uri)+`]}`, nil)
				if ack := l.Next(t); !strings.Contains(ack, "notifications/subscriptions/acknowledged") || !strings.Contains(ack, "mem://r/") {
					t.Fatalf("acknowledgement %.200s", ack)
				}
				mcptest.WaitFor(t, "the backend took the subscription", func() bool { return subscribed.Load() > int64(round) })
				// Other responses hold the whole budget now.
				var held int64
				for held == 0 {
					if free := listenBudget - r.ResultBytesInFlight(); r.TakeResultBytes("", free) == nil {
						held = free
					}
				}
				// The update does not fit: the stream ends, and with it the listen, gracefully.
				for i, ended := 0, false; !ended; i++ {
					if i == 400 {
						t.Fatal("the listen did not end")
					}
					_ = be.MCP().ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: uri, Meta: pad})
					select {
					case m := <-l.Msgs:
						if !strings.Contains(m, `"result"`) {
							t.Fatalf("the listen got %.200s", m)
						}
						ended = true
					case <-time.After(25 * time.Millisecond): // a poll interval, not an assertion
					}
				}
				if err := <-l.Done; err != nil {
					t.Fatalf("Listen = %v", err)
				}
				r.ReturnResultBytes("", held)
			}
			mcptest.WaitFor(t, "the streams' outcomes", func() bool { return len(outcomes.outcomes()) >= 3 })
			for _, oc := range outcomes.outcomes() {
				if oc != OutcomeCanceled {
					t.Errorf("a stream the gateway's budget ended has outcome %q, want %q", oc, OutcomeCanceled)
				}
			}
			if got := r.CircuitStates()["be"]; got != CircuitClosed || len(states.get()) > 1 {
				t.Errorf("circuit %d, states reported %v: the gateway's own budget counted against a healthy backend", got, states.get())
			}
			if h := r.Health()[0]; h.LastError != "" {
				t.Errorf("health last error %q", h.LastError)
			}
		})
	}
}
