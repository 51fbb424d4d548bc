package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// viewCache is one of the catalog's views of backend lists, stored and looked up as the call
// path does.
type viewCache struct {
	name string
	// put stores the view of key's list, private or public, counted against share.
	put func(key partKey, share string, private bool)
	// found reports whether a caller's lookup finds a view: its own (own), else the public one
	// (pub); own is pub for a caller without authentication.
	found func(pub, own partKey) bool
	// callers is the number of callers in the cache's share index.
	callers func() int
}

// viewCaches are the header-binding indexes, the pin verdicts and the MCP Apps list failures of
// a fresh Catalog, whose evictions count into ev.
func viewCaches(now time.Time, ev *shareEvictions) []viewCache {
	c := New(nil, nil, Options{Now: func() time.Time { return now }, CacheEvicted: ev.hook})
	expires := now.Add(time.Hour)
	return []viewCache{{
		name: CacheHeaderIndex,
		put: func(k partKey, share string, private bool) {
			p := &part{ttlMs: time.Hour.Milliseconds(), private: private,
				items: []listItem{newListItem(names.Target{Upstream: k.upstream, Name: "t"}, []byte(`{"name":"t"}`))}}
			c.toolHeaders.forPart(k, share, p, 0, now)
		},
		found: func(pub, own partKey) bool { return c.toolHeaders.recent(pub, own, 0, now) != nil },
		callers: func() int {
			c.toolHeaders.mu.Lock()
			defer c.toolHeaders.mu.Unlock()
			return c.toolHeaders.entries.Callers()
		},
	}, {
		name: CachePinVerdicts,
		put: func(k partKey, share string, private bool) {
			c.pinViews.put(k, share, &pinView{verdicts: map[string]pins.Verdict{"t": {}}, private: private, expires: expires})
		},
		found: func(pub, own partKey) bool {
			_, ok := c.pinViews.recent(pub, own, 0, now)
			return ok
		},
		callers: func() int {
			c.pinViews.mu.Lock()
			defer c.pinViews.mu.Unlock()
			return c.pinViews.entries.Callers()
		},
	}, {
		name: CacheAppFailures,
		// A failure is always keyed by its caller; pub is the key of no caller (no authentication).
		put: func(k partKey, share string, _ bool) {
			c.appFailures.put(k, share, listFailure{err: errors.New("down"), until: expires})
		},
		found: func(_, own partKey) bool { return c.appFailures.get(own, 0, now) != nil },
		callers: func() int {
			c.appFailures.mu.Lock()
			defer c.appFailures.mu.Unlock()
			return c.appFailures.entries.Callers()
		},
	}}
}

// shareEvictions counts Options.CacheEvicted reports by cache and cause.
type shareEvictions struct{ own, total map[string]int }

func (e *shareEvictions) hook(cache string, own bool) {
	if own {
		e.own[cache]++
	} else {
		e.total[cache]++
	}
}

// TestViewShareOneCallerCannotEvictOthers: a token-exchange backend lists privately per token,
// so each of a caller's tokens gets its own header-binding index, pin verdicts and remembered
// MCP Apps list failure. Alice, with four times as many tokens as a view holds entries, makes
// the gateway hold a view of each; she evicts only her own (her oldest, never her newest), and
// bob's private view and the public one are still found, so their calls need neither a list
// request nor a new index. Her share is an eighth of the view; the caller index holds only
// callers with an entry.
func TestViewShareOneCallerCannotEvictOthers(t *testing.T) {
	const aliceTokens = 4 * DefaultCacheEntries
	now := newTestClock().Now()
	ev := &shareEvictions{own: map[string]int{}, total: map[string]int{}}
	for _, vc := range viewCaches(now, ev) {
		t.Run(vc.name, func(t *testing.T) {
			pub := partKey{upstream: "u", list: toolsListIndex, version: "2026-07-28"}
			key := func(caller string) partKey { k := pub; k.caller = caller; return k }
			bob := key("iss#bob")
			vc.put(bob, "iss#bob", true)
			if vc.name != CacheAppFailures {
				vc.put(pub, "", false)
			} else {
				vc.put(pub, "", true) // the failure of a caller without authentication: every such caller's
			}
			alice := func(i int) partKey { return key(fmt.Sprintf("iss#alice\x00token-%d", i)) }
			for i := range aliceTokens {
				vc.put(alice(i), "iss#alice", true)
			}
			if !vc.found(pub, bob) {
				t.Error("alice's views evicted bob's")
			}
			if !vc.found(pub, pub) {
				t.Error("alice's views evicted the public one")
			}
			none := pub // a list of which no public view is held: her own views alone are found
			none.version = "2025-11-25"
			if !vc.found(none, alice(aliceTokens-1)) || vc.found(none, alice(0)) {
				t.Error("alice's share kept the wrong views: want her most recent, not her first")
			}
			share := DefaultCacheEntries / ShareDivisor
			if ev.own[vc.name] != aliceTokens-share || ev.total[vc.name] != 0 {
				t.Errorf("evictions: %d own share, %d total; want %d, 0", ev.own[vc.name], ev.total[vc.name], aliceTokens-share)
			}
			if n := vc.callers(); n != 2 {
				t.Errorf("the caller index holds %d callers, want alice and bob", n)
			}
		})
	}
}

// TestViewShareIsTheCallers: the views a caller's requests make count against the share of its
// identity (ListRequest.CacheKey), not as public: the index of a private tools list a client
// listed, and the failure to have a list for an MCP App's tool name. (That a token-exchange
// backend's views of one identity's many tokens share one share is
// TestCacheShareOneCallerCannotEvictOthers in package upstreams.)
func TestViewShareIsTheCallers(t *testing.T) {
	body := bigListBody(1, "private")
	listed, _ := upstreamstest.Scripted(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { upstreamstest.WriteJSON(w, body) })
	down, _ := upstreamstest.Scripted(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	c := newTestCatalog(t, Options{}, backend.Config{Name: "listed", URL: listed, Protocol: backend.ProtocolVersion},
		backend.Config{Name: "down", URL: down, Protocol: backend.ProtocolVersion})
	const alice = "iss#alice"
	if _, err := c.List(context.Background(), &ListRequest{Method: wire.MethodToolsList, CacheKey: alice,
		Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ResolveAppName(context.Background(), &ToolHeaderQuery{CacheKey: alice}, "t", nil); err == nil {
		t.Fatal("a backend that fails its list resolved an app's tool name")
	}
	for name, shares := range map[string]interface {
		Usage(string) (int, int64)
		Callers() int
	}{
		CacheHeaderIndex: c.toolHeaders.entries, CacheAppFailures: c.appFailures.entries,
	} {
		if n, _ := shares.Usage(alice); n == 0 || shares.Callers() != 1 {
			t.Errorf("%s: alice's view counts against %d shares, none hers", name, shares.Callers())
		}
	}
}

// TestViewShareBytes: the header-binding indexes and the pin verdicts are bounded in bytes as the
// list cache is (cache.maxBytes), each caller's private ones by an eighth: alice's many indexes
// of long lists evict only her own, bob's stays, and one larger than a share is used, not kept.
func TestViewShareBytes(t *testing.T) {
	const budget = 64 << 10
	now := newTestClock().Now()
	c := New(nil, nil, Options{Now: func() time.Time { return now }, Cache: CacheConfig{MaxBytes: budget}})
	listOf := func(n int) *part {
		p := &part{ttlMs: time.Hour.Milliseconds(), private: true}
		for i := range n {
			p.items = append(p.items, newListItem(names.Target{Upstream: "u", Name: fmt.Sprintf("tool_%04d", i)}, []byte(`{}`)))
		}
		return p
	}
	verdictsOf := func(n int) *pinView {
		v := &pinView{verdicts: map[string]pins.Verdict{}, private: true, expires: now.Add(time.Hour)}
		for i := range n {
			v.verdicts[fmt.Sprintf("tool_%04d", i)] = pins.Verdict{}
		}
		return v
	}
	key := func(caller string) partKey {
		return partKey{upstream: "u", list: toolsListIndex, version: "2026-07-28", caller: caller}
	}
	bob := key("iss#bob")
	c.toolHeaders.forPart(bob, "iss#bob", listOf(10), 0, now)
	c.pinViews.put(bob, "iss#bob", verdictsOf(10))
	for i := range 40 { // 40 views of 20 items (about 2 KiB each): far more than alice's 8 KiB share
		k := key(fmt.Sprint("iss#alice\x00token-", i))
		c.toolHeaders.forPart(k, "iss#alice", listOf(20), 0, now)
		c.pinViews.put(k, "iss#alice", verdictsOf(20))
	}
	carol := key("iss#carol")
	c.toolHeaders.forPart(carol, "iss#carol", listOf(budget/ShareDivisor/indexItemBytes), 0, now)
	c.pinViews.put(carol, "iss#carol", verdictsOf(budget/ShareDivisor/pinVerdictBytes))
	for name, lru := range map[string]interface {
		has(partKey) bool
		shareBytes(string) int64
	}{CacheHeaderIndex: lruView[*headerIndex]{c.toolHeaders.entries}, CachePinVerdicts: lruView[*pinView]{c.pinViews.entries}} {
		if !lru.has(bob) {
			t.Errorf("%s: alice's views evicted bob's", name)
		}
		if b := lru.shareBytes("iss#alice"); b == 0 || b > budget/ShareDivisor {
			t.Errorf("%s: alice's views hold %d bytes, want some, at most her share, %d", name, b, budget/ShareDivisor)
		}
		if lru.has(carol) {
			t.Errorf("%s: a view larger than a caller's share was kept", name)
		}
	}
}

// lruView reads a cache of views for TestViewShareBytes.
type lruView[V any] struct{ s *sharelru.Cache[partKey, V] }

func (l lruView[V]) has(k partKey) bool {
	_, ok := l.s.Peek(k)
	return ok
}

func (l lruView[V]) shareBytes(caller string) int64 {
	_, b := l.s.Usage(caller)
	return b
}

// TestViewBytesEstimate: the header-binding indexes' estimate of their memory holds what they
// really keep alive: indexes of many callers' long private lists, whose lists are gone, grow the
// heap by about the byte budget, not by callers × index.
func TestViewBytesEstimate(t *testing.T) {
	const tools, callers, budget = 5000, 40, 4 << 20
	now := newTestClock().Now()
	c := New(nil, nil, Options{Now: func() time.Time { return now }, Cache: CacheConfig{MaxBytes: budget}})
	listOf := func(caller int) *part { // names of its own, as each caller's list read from the wire
		p := &part{ttlMs: time.Hour.Milliseconds(), private: true}
		for i := range tools {
			p.items = append(p.items, newListItem(names.Target{Upstream: "u", Name: fmt.Sprintf("c%03d_tool_%06d", caller, i)}, nil))
		}
		return p
	}
	before := upstreamstest.HeapInUse()
	for i := range callers {
		k := partKey{upstream: "u", list: toolsListIndex, version: "2026-07-28", caller: fmt.Sprint("iss#caller-", i)}
		c.toolHeaders.forPart(k, k.caller, listOf(i), 0, now)
	}
	after := upstreamstest.HeapInUse()
	c.toolHeaders.mu.Lock()
	est, n := c.toolHeaders.entries.Bytes(), c.toolHeaders.entries.Len()
	c.toolHeaders.mu.Unlock()
	grow := int64(after) - int64(before)
	t.Logf("%d callers' indexes of %d tools: %d kept, %d KiB by the estimate; heap +%d KiB", callers, tools, n, est>>10, grow>>10)
	if n == 0 || n == callers || est > budget {
		t.Fatalf("%d indexes kept, %d bytes by the estimate; want some, not all, within %d", n, est, budget)
	}
	if grow > est+est/4+1<<20 {
		t.Fatalf("the indexes kept hold %d KiB of heap, their estimate %d KiB: it undercounts", grow>>10, est>>10)
	}
}
