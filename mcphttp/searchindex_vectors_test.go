package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/internal/testsupport/embedtest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// ledgerCatalog is the public catalog of a real backend serving n described tools.
func ledgerCatalog(t *testing.T, n int) *upstreams.ToolCatalog {
	t.Helper()
	opts := []mcptest.Option{mcptest.WithoutDefaults()}
	for i := range n {
		opts = append(opts, describedTool(fmt.Sprintf("records_%d", i), fmt.Sprintf("Reads the records of ledger %d.", i)))
	}
	be := mcptest.StartServer(t, "be", opts...)
	s, _ := testServer(t, Config{}, oneBackendNamed("be", be.URL()), upstreams.Options{}, Deps{})
	cat, err := s.backends.ToolCatalog(context.Background(), &upstreams.ListRequest{Method: upstreams.MethodToolsList,
		Params: json.RawMessage(`{` + mcptest.Meta + `}`)})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// newTestEmbedder is an embedder asking a stand-in endpoint (embedtest), closed with the test.
func newTestEmbedder(t *testing.T, srv *embedtest.Server) *embeddings.Embedder {
	e := embeddings.New(embeddings.Config{URL: srv.URL, Model: "stand-in"}, "", embeddings.Deps{Log: slog.New(slog.DiscardHandler)})
	t.Cleanup(e.Close)
	return e
}

// TestIndexCacheCountsVectors: the tools' vectors, which arrive in the background after an index
// is built, count in the index's size, so the index cache never holds more than its bound with
// them. An index that fits without its vectors but not with them is dropped once they are in
// (coming from the endpoint after the build, or from the vector cache at once); one with room
// for them is kept, its size grown by theirs. What the cache holds is measured from the indexes
// (their size when built plus 4 bytes a dimension of each vector), not from its own tally.
func TestIndexCacheCountsVectors(t *testing.T) {
	srv := embedtest.Start(t, "")
	cat := ledgerCatalog(t, 24)
	// The index's size without its vectors, and theirs.
	probe := newIndexCache(slog.New(slog.DiscardHandler), 0)
	probe.embed = newTestEmbedder(t, srv)
	ix, err := probe.get(context.Background(), cat, "")
	if err != nil {
		t.Fatal(err)
	}
	waitVectors(t, ix)
	var vecs int64
	for _, v := range ix.vectors.Of() {
		vecs += 4 * int64(len(v))
	}
	base := probe.build(cat, "").size
	if vecs == 0 || base <= 0 {
		t.Fatalf("index of %d bytes with %d bytes of vectors: want both", base, vecs)
	}

	for _, tt := range []struct {
		name     string
		maxBytes int64
		warm     bool // the vector cache holds the vectors already
		kept     bool
	}{
		{"vectors arriving past the bound", base + vecs/2, false, false},
		{"vectors cached past the bound", base + vecs/2, true, false},
		{"vectors arriving within the bound", base + vecs + vecs/2, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newIndexCache(slog.New(slog.DiscardHandler), tt.maxBytes)
			c.embed = probe.embed
			if !tt.warm {
				c.embed = newTestEmbedder(t, srv)
			}
			var builtSize int64
			c.buildFn = func(cat *upstreams.ToolCatalog) *catalogIndex {
				ix := c.build(cat, "")
				builtSize = ix.size
				return ix
			}
			ix, err := c.get(context.Background(), cat, "")
			if err != nil {
				t.Fatal(err)
			}
			if builtSize > tt.maxBytes {
				t.Fatalf("built at %d bytes, beyond the bound of %d: the case wants it within", builtSize, tt.maxBytes)
			}
			waitVectors(t, ix)
			var present int64
			for _, v := range ix.vectors.Of() {
				present += 4 * int64(len(v))
			}
			if present != vecs {
				t.Fatalf("the index holds %d bytes of vectors, want %d", present, vecs)
			}
			c.mu.Lock()
			held, ok := c.entries.Peek(ix.version)
			kept := ok && held == ix
			total, size := c.entries.Bytes(), ix.size
			c.mu.Unlock()
			actual := builtSize + present
			if kept && actual > tt.maxBytes {
				t.Fatalf("the index cache holds an index of %d bytes with its vectors (%d counted), beyond its bound of %d",
					actual, total, tt.maxBytes)
			}
			if kept != tt.kept {
				t.Fatalf("index kept: %v, want %v (%d bytes with its vectors, bound %d)", kept, tt.kept, actual, tt.maxBytes)
			}
			if kept && (size != actual || total != actual) {
				t.Fatalf("the index counts %d bytes and the cache %d, want %d with its vectors", size, total, actual)
			}
		})
	}
}

// waitVectors waits until every tool of ix has its vector.
func waitVectors(t *testing.T, ix *catalogIndex) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if ix.vectors == nil || !ix.vectors.Wait(ctx) {
		t.Fatal("the tools' vectors did not arrive")
	}
}
