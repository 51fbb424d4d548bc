package catalog

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// newTestClock returns the manual clock the catalog tests inject.
func newTestClock() *mcptest.Clock {
	return mcptest.NewClock(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC))
}

// newTestCatalog builds the Catalog of the backends cfgs, as a Registry would: real backends,
// the default separator, and cursors sealed by the gateway's own key ring.
func newTestCatalog(t testing.TB, o Options, cfgs ...backend.Config) *Catalog {
	t.Helper()
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "t", Secret: bytes.Repeat([]byte("k"), 32)}}})
	if err != nil {
		t.Fatal(err)
	}
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
	o.Cursors, o.Log, o.Now = ring.Sealer(seal.PurposeCursor), log, time.Now
	return New(bs, ns, o)
}
