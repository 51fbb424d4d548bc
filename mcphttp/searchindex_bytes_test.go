package mcphttp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestIndexCacheBoundedInBytes: the search index cache holds at most cache.maxBytes of indexes,
// as the list cache does, and one caller's private index at most an eighth of it. An index
// larger than that (the whole bound for a public catalog's) answers the search that built it
// and is not kept: a second search builds it again, and the cache never holds more than its
// bound. An index within the bound is kept: two searches build it once.
func TestIndexCacheBoundedInBytes(t *testing.T) {
	const maxBytes = 256 << 10
	share := maxBytes / int64(sharelru.CallerShareDivisor)
	for _, tt := range []struct {
		name   string
		scope  string
		tools  int
		kept   bool
		within int64 // the bound the index's size is beyond (not kept) or within (kept)
	}{
		{"private catalog beyond a caller's share", "private", 120, false, share},
		{"public catalog beyond the whole bound", "public", 700, false, maxBytes},
		{"private catalog within a caller's share", "private", 3, true, share},
		{"public catalog within the bound", "public", 3, true, maxBytes},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := []mcptest.Option{mcptest.WithoutDefaults(), mcptest.WithCacheHints(60000, tt.scope)}
			for i := range tt.tools {
				opts = append(opts, describedTool(fmt.Sprintf("records_%d", i), fmt.Sprintf("Reads the records of ledger %d. ", i)+
					strings.Repeat(fmt.Sprintf("Ledger %d keeps entries by account, date and amount. ", i), 6)))
			}
			be := mcptest.StartServer(t, "be", opts...)
			ucfg := oneBackendNamed("be", be.URL())
			ucfg.Cache.MaxBytes = maxBytes
			s, e := testServer(t, Config{Search: SearchConfig{Enabled: true}}, ucfg, upstreams.Options{}, Deps{})
			c := s.search.index
			var built []*catalogIndex
			builds := 0
			c.onBuild = func(int) { builds++ }
			c.buildFn = func(cat *upstreams.ToolCatalog) *catalogIndex {
				ix := c.build(cat, "")
				built = append(built, ix)
				return ix
			}
			url := serveTest(t, e).URL + DefaultPath
			for range 2 {
				r := do(t, "POST", url, modern("tools/call", findToolsName),
					`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+mcptest.Meta+`,"name":"find_tools","arguments":{"query":"ledger 1 records"}}}`)
				mcptest.CheckRPC(t, r, 0)
				if !strings.Contains(string(r.Body), "be__records_1") {
					t.Fatalf("find_tools did not find the tool: %s", r.Body)
				}
				// What the cache holds, counted from the indexes themselves, not from its own tally.
				held, bytes := 0, int64(0)
				c.mu.Lock()
				for _, ix := range built {
					if got, ok := c.entries.Peek(ix.version); ok && got == ix {
						held, bytes = held+1, bytes+ix.size
					}
				}
				c.mu.Unlock()
				// One caller's private indexes hold at most its share.
				if limit := map[string]int64{"private": share, "public": maxBytes}[tt.scope]; bytes > limit {
					t.Fatalf("the index cache holds %d bytes of %s indexes, beyond their bound of %d", bytes, tt.scope, limit)
				}
				if want := map[bool]int{true: 1, false: 0}[tt.kept]; held != want {
					t.Fatalf("the index cache holds %d indexes (%d bytes), want %d", held, bytes, want)
				}
			}
			if len(built) == 0 {
				t.Fatal("no index built")
			}
			if (built[0].size > tt.within) == tt.kept {
				t.Fatalf("the catalog's index takes %d bytes: the case wants it %s %d", built[0].size,
					map[bool]string{true: "within", false: "beyond"}[tt.kept], tt.within)
			}
			if want := map[bool]int{true: 1, false: 2}[tt.kept]; builds != want {
				t.Fatalf("two searches built the index %d times, want %d", builds, want)
			}
		})
	}
}
