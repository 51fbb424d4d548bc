package listen

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// newTestSource builds the Source of the backends cfgs, as a Registry would, each backend's
// server/discover answer cached or fetched.
func newTestSource(t testing.TB, cfgs ...backend.Config) *Source {
	t.Helper()
	bs, ns := upstreamstest.Backends(t, cfgs...)
	return &Source{Backends: bs, Names: ns, Log: slog.New(slog.DiscardHandler), Now: time.Now,
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

// modernConfig is the configuration of a modern backend named name at url, without a breaker.
func modernConfig(name, url string) backend.Config {
	return backend.Config{Name: name, URL: url, Protocol: backend.ProtocolVersion,
		Breaker: backend.BreakerConfig{Disabled: true}, Timeout: 5 * time.Second}
}
