package backend

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/testsupport/flighttest"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// A caller that found the era unknown while another's probe was under way, and reached the
// flight only after the probe failed, is given the backoff that failure started: the backend
// sees one probe, not two.
func TestEraFlightAfterAnotherFailed(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	defer srv.Close()
	env := &Env{Log: slog.New(slog.DiscardHandler), Now: time.Now, Names: names.New("__", false, []string{"s"}),
		Results: bodyread.NewBudget(1 << 20)}
	b, err := New(Config{Name: "s", URL: srv.URL, Breaker: BreakerConfig{Disabled: true}}, env)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	var second error
	var once int64
	first := flighttest.HeldFirst(&b.legacy.beforeFlight,
		func() error {
			_, _, err := b.isLegacy(context.Background(), &Request{Method: "tools/call"})
			return err
		},
		func() {
			_, _, second = b.isLegacy(context.Background(), &Request{Method: "tools/call"})
			once = requests.Load()
		})
	if first == nil || second == nil {
		t.Fatalf("errors %v and %v, want the probe's failure", first, second)
	}
	if n := requests.Load(); once == 0 || n != once {
		t.Fatalf("%d requests to the backend, want the %d of one probe", n, once)
	}
}
