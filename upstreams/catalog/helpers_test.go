package catalog

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// newTestClock returns the manual clock the catalog tests inject.
func newTestClock() *mcptest.Clock {
	return mcptest.NewClock(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC))
}

// newTestCatalog builds the Catalog of the backends cfgs, as a Registry would, with cursors
// sealed by the gateway's own key ring.
func newTestCatalog(t testing.TB, o Options, cfgs ...backend.Config) *Catalog {
	t.Helper()
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "t", Secret: bytes.Repeat([]byte("k"), 32)}}})
	if err != nil {
		t.Fatal(err)
	}
	bs, ns := upstreamstest.Backends(t, cfgs...)
	o.Cursors, o.Log, o.Now = ring.Sealer(seal.PurposeCursor), slog.New(slog.DiscardHandler), time.Now
	return New(bs, ns, o)
}
