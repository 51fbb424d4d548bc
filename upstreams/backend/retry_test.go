package backend

import (
	"log/slog"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

func TestRetryWait(t *testing.T) {
	p := newRetryPolicy(RetryConfig{Backoff: 100 * time.Millisecond, MaxBackoff: 300 * time.Millisecond})
	tests := []struct {
		n        int
		min, max time.Duration
	}{
		{1, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 100 * time.Millisecond, 200 * time.Millisecond},
		{3, 150 * time.Millisecond, 300 * time.Millisecond},
		{60, 150 * time.Millisecond, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		for range 200 {
			if w := p.wait(tt.n); w < tt.min || w > tt.max {
				t.Fatalf("wait(%d) = %v, want within [%v, %v]", tt.n, w, tt.min, tt.max)
			}
		}
	}
	if p.attempts != DefaultRetryAttempts {
		t.Fatalf("attempts = %d, want the default %d", p.attempts, DefaultRetryAttempts)
	}
}

// TestPoolLetsGoBeforeCommonServers: the gateway lets go of an idle pooled connection before
// the servers MCP backends commonly run on close it (Node's http.Server and uvicorn, 5 s), so a
// call is never written to a connection the backend is closing: a tools/call that fails so is
// not retried. Both transports, net/http's for https backends and direct's for plain http, are
// built with DefaultIdleConnTimeout unless the backend's idleConnTimeout says otherwise (tls.go).
func TestPoolLetsGoBeforeCommonServers(t *testing.T) {
	if tr := newTransport(time.Second, DefaultIdleConnTimeout); tr.IdleConnTimeout <= 0 || tr.IdleConnTimeout >= commonServerIdle {
		t.Errorf("idle connections kept %s, want less than the %s after which common backends close them",
			tr.IdleConnTimeout, commonServerIdle)
	}
}

// TestIdleConnTimeoutConfigured: a backend's idleConnTimeout reaches the pool of either
// transport: net/http's for an https backend, direct's for plain http.
func TestIdleConnTimeoutConfigured(t *testing.T) {
	env := &Env{Log: slog.New(slog.DiscardHandler), Now: time.Now, Names: names.New("__", false, []string{"s", "p"}),
		Results: bodyread.NewBudget(1 << 20)}
	for _, tt := range []struct{ url string }{{"https://backend.example/mcp"}, {"http://backend.example/mcp"}} {
		for _, idle := range []time.Duration{0, 700 * time.Millisecond} {
			b, err := New(Config{Name: "s", URL: tt.url, IdleConnTimeout: idle}, env)
			if err != nil {
				t.Fatal(err)
			}
			want := idle
			if want == 0 {
				want = DefaultIdleConnTimeout
			}
			got := b.transport.IdleConnTimeout
			if b.direct != nil {
				got = b.direct.IdleTimeout()
			}
			if got != want {
				t.Errorf("%s, idleConnTimeout %s: the pool keeps idle connections %s, want %s", tt.url, idle, got, want)
			}
			b.Close()
		}
	}
}
