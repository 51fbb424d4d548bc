package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// bigListBody is a tools/list result of n tools of about 300 bytes each, with the given scope.
func bigListBody(n int, scope string) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":600000,"cacheScope":"` + scope + `","tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"tool_%06d","description":"%s","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`,
			i, strings.Repeat("d", 200))
	}
	b.WriteString(`]}}`)
	return b.String()
}

// TestCacheBoundedInBytes: many callers of a large private list each get their own copy, but the
// cache keeps only what fits in maxBytes (least recently used out first), and the heap grows by
// about that budget, not by callers × list size.
func TestCacheBoundedInBytes(t *testing.T) {
	// A caller's share (an eighth of the budget, share.go) holds one copy of the list.
	const tools, callers, budget = 5000, 40, 16 << 20
	body := bigListBody(tools, "private")
	url, hits := upstreamstest.Scripted(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { upstreamstest.WriteJSON(w, body) })
	r := newTestCatalog(t, Options{Cache: CacheConfig{MaxBytes: budget}},
		backend.Config{Name: "big", URL: url, Protocol: backend.ProtocolVersion})
	list := func(key string) int {
		res, err := r.List(context.Background(), &ListRequest{Method: wire.MethodToolsList, CacheKey: key,
			Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
		if err != nil {
			t.Fatalf("List as %q: %v", key, err)
		}
		return len(res)
	}
	list("warm-up") // connections, buffers and the first copy
	before := upstreamstest.HeapInUse()
	for i := range callers {
		if n := list(fmt.Sprintf("iss#caller-%d", i)); n < 1000 {
			t.Fatalf("caller %d got %d bytes, want the list", i, n)
		}
	}
	after := upstreamstest.HeapInUse()
	bytes, entries := r.cache.retained()
	perList := int64(len(body)) // a lower bound of one cached copy
	t.Logf("%d private callers of a %d-tool list (%d KiB JSON): cache holds %d lists, %d KiB by its count; heap %d → %d KiB (+%d KiB)",
		callers, tools, len(body)>>10, entries, bytes>>10, before>>10, after>>10, (int64(after)-int64(before))>>10)
	if bytes > budget || entries == 0 || int64(entries) > budget/perList {
		t.Fatalf("cache holds %d lists, %d bytes; want at least one and at most %d bytes", entries, bytes, budget)
	}
	// Unbounded, the 40 copies retain about 40 × 1.3 MiB; allow the budget twice plus slack.
	if grow := int64(after) - int64(before); grow > 2*budget+8<<20 {
		t.Fatalf("heap grew by %d KiB for %d callers, want under %d KiB", grow>>10, callers, (2*budget+8<<20)>>10)
	}
	// The most recent callers are served from the cache, the oldest were evicted.
	requests := hits.Load()
	list(fmt.Sprintf("iss#caller-%d", callers-1))
	if hits.Load() != requests {
		t.Error("the most recent caller's list was not cached")
	}
	list("iss#caller-0")
	if hits.Load() != requests+1 {
		t.Error("the least recently used caller's list was not evicted")
	}
}

// TestCacheOversizedPartNotCached: a list larger than the whole budget is served, never cached,
// and does not evict the lists that fit.
func TestCacheOversizedPartNotCached(t *testing.T) {
	clock := newTestClock()
	c := newListCache(CacheConfig{MaxBytes: 4096}, clock.Now, nil)
	small := &part{ttlMs: 1000, private: true, items: []listItem{newListItem(names.Target{Upstream: "u", Name: "a"}, []byte(`{"name":"u__a"}`))}}
	c.put(partKey{upstream: "u", list: 1, caller: "small"}, "small", small, 0)
	big := &part{ttlMs: 1000, private: true, items: []listItem{newListItem(names.Target{Upstream: "u", Name: "b"}, make([]byte, 8192))}}
	c.put(partKey{upstream: "u", list: 1, caller: "big"}, "big", big, 0)
	if c.get(partKey{upstream: "u", list: 1, caller: "big"}) != nil {
		t.Fatal("a part larger than maxBytes was cached")
	}
	if c.get(partKey{upstream: "u", list: 1, caller: "small"}) == nil {
		t.Fatal("an oversized part evicted a part that fits")
	}
	if b, n := c.retained(); n != 1 || b != small.retainedBytes() {
		t.Fatalf("retained %d bytes in %d lists, want %d in 1", b, n, small.retainedBytes())
	}
	c.invalidate("u", toolLists)
	if b, n := c.retained(); b != 0 || n != 0 {
		t.Fatalf("after invalidation %d bytes in %d lists, want none", b, n)
	}
}

func TestCacheMaxBytesValidated(t *testing.T) {
	for _, v := range []int64{-1, MaxCacheBytes + 1} {
		if errs := (&CacheConfig{MaxBytes: v}).Problems(); len(errs) == 0 {
			t.Errorf("maxBytes %d accepted", v)
		}
	}
}
