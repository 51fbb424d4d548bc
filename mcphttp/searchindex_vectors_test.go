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

// newTestEmbedder is an embedder asking a stand-in endpoint (embedtest), closed with the test,
// its vector cache of cacheBytes (none: the default).
func newTestEmbedder(t *testing.T, srv *embedtest.Server, cacheBytes ...int64) *embeddings.Embedder {
	cfg := embeddings.Config{URL: srv.URL, Model: "stand-in"}
	for _, n := range cacheBytes {
		cfg.MaxCacheBytes = n
	}
	e := embeddings.New(cfg, "", embeddings.Deps{Log: slog.New(slog.DiscardHandler)})
	t.Cleanup(e.Close)
	return e
}

// indexAndVectorBytes is the size of cat's index built by probe (whose bound must hold it with its
// vectors) without its vectors, and theirs (4 bytes a dimension).
func indexAndVectorBytes(t *testing.T, probe *indexCache, cat *upstreams.ToolCatalog) (base, vecs int64) {
	t.Helper()
	ix, err := probe.get(context.Background(), cat, "")
	if err != nil {
		t.Fatal(err)
	}
	waitVectors(t, ix)
	for _, v := range ix.vectors.Of() {
		vecs += 4 * int64(len(v))
	}
	base = probe.build(cat, "").size
	if vecs == 0 || base <= 0 {
		t.Fatalf("index of %d bytes with %d bytes of vectors: want both", base, vecs)
	}
	return base, vecs
}

// TestIndexTooLargeNotEmbeddedEachSearch: an index its tools' vectors take past the cache's bound
// is dropped once they arrive; its version's next build, within lexicalFor, embeds nothing and is
// kept (its searches rank lexically), so searching it again neither rebuilds it nor sends its
// tools to the endpoint again. After lexicalFor a build embeds again. An index too large to keep
// even without vectors is never embedded: it is built at each search, as before, but sends
// nothing. The endpoint's vector cache holds nothing here, so each embedding is a request.
func TestIndexTooLargeNotEmbeddedEachSearch(t *testing.T) {
	srv := embedtest.Start(t, "")
	const tools = 24
	cat := ledgerCatalog(t, tools)
	probe := newIndexCache(slog.New(slog.DiscardHandler), 0)
	probe.embed = newTestEmbedder(t, srv)
	base, vecs := indexAndVectorBytes(t, probe, cat)
	for _, tt := range []struct {
		name           string
		maxBytes       int64
		builds, texts  int // after four searches
		later, laterTx int // after the time passes and the index is dropped: one search more
	}{
		{"too large with its vectors", base + vecs/2, 2, tools, 3, 2 * tools},
		{"too large without them", base / 2, 4, 0, 5, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newIndexCache(slog.New(slog.DiscardHandler), tt.maxBytes)
			c.embed = newTestEmbedder(t, srv, 1)
			now := time.Now()
			c.now = func() time.Time { return now }
			builds := 0
			c.onBuild = func(int) { builds++ }
			_, before := srv.Counts()
			search := func() {
				t.Helper()
				ix, err := c.get(context.Background(), cat, "")
				if err != nil {
					t.Fatal(err)
				}
				if ix.vectors != nil {
					waitVectors(t, ix)
				}
			}
			for range 4 {
				search()
			}
			if _, texts := srv.Counts(); builds != tt.builds || texts-before != tt.texts {
				t.Fatalf("four searches built the index %d times and sent %d texts, want %d and %d",
					builds, texts-before, tt.builds, tt.texts)
			}
			now = now.Add(lexicalFor)
			c.mu.Lock()
			c.entries.Remove(cat.Version())
			c.mu.Unlock()
			search()
			if _, texts := srv.Counts(); builds != tt.later || texts-before != tt.laterTx {
				t.Fatalf("after %v: %d builds and %d texts, want %d and %d", lexicalFor, builds, texts-before, tt.later, tt.laterTx)
			}
		})
	}
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
	probe := newIndexCache(slog.New(slog.DiscardHandler), 0)
	probe.embed = newTestEmbedder(t, srv)
	base, vecs := indexAndVectorBytes(t, probe, cat)

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
