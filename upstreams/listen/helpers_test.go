package listen

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// newTestSource builds the Source of the backends cfgs, as a Registry would: real backends, the
// default separator, each backend's server/discover answer cached or fetched.
func newTestSource(t testing.TB, cfgs ...backend.Config) *Source {
	t.Helper()
	upstreams := make([]string, len(cfgs))
	for i := range cfgs {
		upstreams[i] = cfgs[i].Name
	}
	ns := names.New("__", false, upstreams)
	log := slog.New(slog.DiscardHandler)
	env := &backend.Env{Log: log, Now: time.Now, Names: ns, Results: bodyread.NewBudget(128 << 20)}
	var bs []*backend.Backend
	t.Cleanup(func() { backend.CloseAll(bs) })
	for _, cfg := range cfgs {
		b, err := backend.New(cfg, env)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	return &Source{Backends: bs, Names: ns, Log: log, Now: time.Now,
		Discover: func(ctx context.Context, hdr http.Header) []*backend.Discovered {
			ds := make([]*backend.Discovered, len(bs))
			for i, b := range bs {
				ds[i], _ = b.Discovery(ctx, hdr)
			}
			return ds
		}}
}

// singleSource is the Source of one modern backend named fault at url, without a breaker.
func singleSource(t testing.TB, url string) *Source {
	return newTestSource(t, backend.Config{Name: "fault", URL: url, Protocol: backend.ProtocolVersion,
		Retry:   backend.RetryConfig{Attempts: 3, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond},
		Breaker: backend.BreakerConfig{Disabled: true}, Timeout: 5 * time.Second})
}

// heapInUse is the live heap after two collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
