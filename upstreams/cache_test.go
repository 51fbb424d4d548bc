package upstreams

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// cacheCounter counts Options.CacheResult reports.
type cacheCounter struct{ hits, misses atomic.Int64 }

func (c *cacheCounter) hook(hit bool) {
	if hit {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
}

// listAs lists tools as the caller identified by key and decodes the result.
func listAs(t *testing.T, r *Registry, key string) map[string]any {
	t.Helper()
	res, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList, CacheKey: key,
		Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
	if err != nil {
		t.Fatalf("List as %q: %v", key, err)
	}
	return decodeObject(t, string(res))
}

func TestCacheHonoursTTL(t *testing.T) {
	backend := mcptest.StartServer(t, "alpha", mcptest.WithCacheHints(60000, "public"))
	clock := newTestClock()
	var cc cacheCounter
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: ProtocolVersion}}},
		Options{Clock: clock.Now, CacheResult: cc.hook})
	steps := []struct {
		advance  time.Duration
		requests int
		ttlMs    float64
	}{
		{0, 1, 60000},
		{20 * time.Second, 1, 40000}, // a hit reports the time the entry has left
		{39 * time.Second, 1, 1000},
		{time.Second, 2, 60000}, // expired: fetched again
		{time.Second, 2, 59000},
	}
	for i, st := range steps {
		clock.Advance(st.advance)
		res := listAs(t, r, "")
		if got := len(backend.RequestsOf(MethodToolsList)); got != st.requests || res["ttlMs"] != st.ttlMs || res["cacheScope"] != "public" {
			t.Fatalf("step %d: %d backend requests, ttlMs %v scope %v; want %d, %v, public", i, got, res["ttlMs"], res["cacheScope"], st.requests, st.ttlMs)
		}
	}
	if cc.hits.Load() != 3 || cc.misses.Load() != 2 {
		t.Fatalf("CacheResult: %d hits, %d misses; want 3, 2", cc.hits.Load(), cc.misses.Load())
	}
}

// TestCacheTTLCapped: a backend's ttlMs is taken as at most a day, for the cache and for what
// clients are told. Before, a ttlMs past about 9.2e12 wrapped the cache's expiry into the past
// (the list was fetched for every request) and reached clients as it was.
func TestCacheTTLCapped(t *testing.T) {
	backend := mcptest.StartServer(t, "alpha", mcptest.WithCacheHints(9_300_000_000_000, "public"))
	clock := newTestClock()
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: ProtocolVersion}}},
		Options{Clock: clock.Now})
	day := float64(24 * time.Hour / time.Millisecond)
	steps := []struct {
		advance  time.Duration
		requests int
		ttlMs    float64
	}{
		{0, 1, day},
		{23 * time.Hour, 1, day - float64(23*time.Hour/time.Millisecond)},
		{time.Hour, 2, day}, // a day passed: fetched again
	}
	for i, st := range steps {
		clock.Advance(st.advance)
		res := listAs(t, r, "")
		if got := len(backend.RequestsOf(MethodToolsList)); got != st.requests || res["ttlMs"] != st.ttlMs {
			t.Fatalf("step %d: %d backend requests, ttlMs %v; want %d, %v", i, got, res["ttlMs"], st.requests, st.ttlMs)
		}
	}
}

func TestCacheZeroTTLAndDisabled(t *testing.T) {
	tests := []struct {
		name  string
		hints mcptest.Option
		cache CacheConfig
	}{
		{"ttlMs 0 is stale", mcptest.WithCacheHints(0, "public"), CacheConfig{}},
		{"cache disabled", mcptest.WithCacheHints(60000, "public"), CacheConfig{Disabled: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			backend := mcptest.StartServer(t, "alpha", tt.hints)
			r := newTestRegistry(t, Config{Cache: tt.cache, Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: ProtocolVersion}}}, Options{})
			for range 3 {
				listAs(t, r, "")
			}
			if got := len(backend.RequestsOf(MethodToolsList)); got != 3 {
				t.Fatalf("%d backend requests for 3 lists, want 3", got)
			}
		})
	}
}

// gatedBackend answers tools/list with a private or public one-tool list named after the
// request number, once the test opens the gate.
func gatedBackend(t *testing.T, scope string) (url string, hits *atomic.Int64, open func()) {
	gate := make(chan struct{})
	var once sync.Once
	open = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open)
	url, hits = upstreamstest.Scripted(t, func(n int64, w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		upstreamstest.WriteJSON(w, toolsListBody(fmt.Sprintf("t%d", n), 60000, scope))
	})
	return url, hits, open
}

// concurrentLists starts one tools/list per key, waits until every one has missed the cache,
// opens the backend and returns each caller's first tool name.
func concurrentLists(t *testing.T, r *Registry, cc *cacheCounter, open func(), keys []string) []string {
	t.Helper()
	names := make([]string, len(keys))
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList, CacheKey: key,
				Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
			if errs[i] = err; err == nil {
				var v struct{ Tools []struct{ Name string } }
				errs[i] = json.Unmarshal(res, &v)
				if len(v.Tools) == 1 {
					names[i] = v.Tools[0].Name
				}
			}
		}()
	}
	mcptest.WaitFor(t, "every list to miss the cache", func() bool { return cc.misses.Load() == int64(len(keys)) })
	open()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("list %d: %v", i, err)
		}
	}
	return names
}

func TestCacheCollapsesConcurrentMisses(t *testing.T) {
	url, hits, open := gatedBackend(t, "public")
	var cc cacheCounter
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "g", URL: url, Protocol: ProtocolVersion}}},
		Options{CacheResult: cc.hook})
	keys := []string{"", "", "iss#alice", "iss#bob", "", "iss#carol", "", "", "", ""}
	names := concurrentLists(t, r, &cc, open, keys)
	if hits.Load() != 1 {
		t.Fatalf("%d concurrent misses made %d backend requests, want 1", len(keys), hits.Load())
	}
	for i, n := range names {
		if n != "g__t1" {
			t.Fatalf("caller %d saw %q, want the one shared public answer g__t1", i, n)
		}
	}
}

// TestCachePrivateNotShared: a private answer reaches only the caller it was fetched for,
// even when that caller's request was collapsed with others'.
func TestCachePrivateNotShared(t *testing.T) {
	url, hits, open := gatedBackend(t, "private")
	var cc cacheCounter
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "g", URL: url, Protocol: ProtocolVersion}}},
		Options{CacheResult: cc.hook})
	names := concurrentLists(t, r, &cc, open, []string{"iss#alice", "iss#bob", ""})
	if names[0] == names[1] || names[0] == names[2] || names[1] == names[2] || hits.Load() != 3 {
		t.Fatalf("callers saw %v after %d backend requests: a private list was shared", names, hits.Load())
	}
	tests := []struct {
		key      string
		want     string
		requests int64
	}{
		{"iss#alice", names[0], 3}, // cached for alice
		{"iss#bob", names[1], 3},   // cached for bob
		{"", "g__t4", 4},           // no key: private lists are not cached
		{"", "g__t5", 5},
		{"iss#carol", "g__t6", 6},
	}
	for _, tt := range tests {
		res := listAs(t, r, tt.key)
		got := mcptest.Path(res, "tools", 0, "name")
		if got != tt.want || hits.Load() != tt.requests || res["cacheScope"] != "private" {
			t.Fatalf("as %q: %v (%v) after %d requests; want %s after %d", tt.key, got, res["cacheScope"], hits.Load(), tt.want, tt.requests)
		}
	}
}

// TestCacheNeverStoresIncomplete: an MRTR (input_required) list page is refused and not cached.
func TestCacheNeverStoresIncomplete(t *testing.T) {
	url, hits := upstreamstest.Scripted(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","ttlMs":60000,"cacheScope":"public",`+
			`"inputRequests":{"x":{"method":"elicitation/create","params":{}}},"requestState":"s"}}`)
	})
	good := mcptest.StartServer(t, "good")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "mrtr", URL: url, Protocol: ProtocolVersion},
		{Name: "good", URL: good.URL(), Protocol: ProtocolVersion},
	}}, Options{})
	for range 2 {
		res := listAs(t, r, "")
		if res["ttlMs"] != float64(0) {
			t.Fatalf("a list missing a backend has ttlMs %v, want 0", res["ttlMs"])
		}
	}
	if hits.Load() != 2 {
		t.Fatalf("the input_required list was asked %d times for 2 lists: it was cached", hits.Load())
	}
}

func TestCacheMergedHints(t *testing.T) {
	pub := mcptest.StartServer(t, "pub", mcptest.WithCacheHints(60000, "public"))
	priv := mcptest.StartServer(t, "priv", mcptest.WithCacheHints(30000, "private"))
	clock := newTestClock()
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "pub", URL: pub.URL(), Protocol: ProtocolVersion},
		{Name: "priv", URL: priv.URL(), Protocol: ProtocolVersion},
	}}, Options{Clock: clock.Now})
	listAs(t, r, "iss#alice")
	clock.Advance(10 * time.Second)
	res := listAs(t, r, "iss#bob") // pub from the cache, priv fetched for bob
	if res["ttlMs"] != float64(30000) || res["cacheScope"] != "private" {
		t.Fatalf("merged hints ttlMs %v scope %v, want the minimum 30000 and private", res["ttlMs"], res["cacheScope"])
	}
	clock.Advance(25 * time.Second)
	res = listAs(t, r, "iss#alice") // both from the cache: 25s left for pub, priv expired
	if res["ttlMs"] != float64(25000) || len(pub.RequestsOf(MethodToolsList)) != 1 || len(priv.RequestsOf(MethodToolsList)) != 3 {
		t.Fatalf("ttlMs %v, pub asked %d, priv asked %d; want 25000, 1, 3", res["ttlMs"],
			len(pub.RequestsOf(MethodToolsList)), len(priv.RequestsOf(MethodToolsList)))
	}
}
