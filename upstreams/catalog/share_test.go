package catalog

import (
	"fmt"
	"testing"

	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// sizedPart is a private part of about n bytes.
func sizedPart(n int) *part {
	return &part{ttlMs: 1000, private: true, items: []listItem{newListItem(names.Target{Upstream: "u", Name: "a"}, make([]byte, n))}}
}

// TestCacheShareBytes: a caller's private lists beyond its share of the bytes evict its own
// least recently used lists, never another caller's; a list larger than a share is served but
// not cached; the caller index holds only callers with a cached list.
func TestCacheShareBytes(t *testing.T) {
	const budget = 64 << 10
	var own, total int
	c := newListCache(CacheConfig{MaxBytes: budget}, newTestClock().Now, nil)
	c.lists.OnEvict(func(cause sharelru.Cause) {
		if cause == sharelru.Share {
			own++
		} else {
			total++
		}
	})
	key := func(caller string, i int) partKey {
		return partKey{upstream: "u", list: 1, version: fmt.Sprint(i), caller: caller}
	}
	c.put(key("bob", 0), "bob", sizedPart(1024), 0)
	for i := range 40 { // 40 lists of 2 KiB: five times alice's 8 KiB share
		c.put(key("alice\x00token", i), "alice", sizedPart(2048), 0)
	}
	if c.get(key("bob", 0)) == nil {
		t.Fatal("alice's lists evicted bob's")
	}
	if c.get(key("alice\x00token", 39)) == nil || c.get(key("alice\x00token", 0)) != nil {
		t.Fatal("alice's share kept the wrong lists: want her most recent, not her first")
	}
	if _, b := c.lists.Usage("alice"); b > c.lists.ShareBytes() || own == 0 || total != 0 {
		t.Fatalf("alice holds %d bytes (share %d); evictions %d own, %d total", b, c.lists.ShareBytes(), own, total)
	}
	c.put(key("carol", 0), "carol", sizedPart(budget/ShareDivisor+1), 0)
	if c.get(key("carol", 0)) != nil {
		t.Fatal("a private list larger than a caller's share was cached")
	}
	c.invalidate("u", toolLists)
	if n := c.lists.Callers(); n != 0 {
		t.Fatalf("after invalidation the caller index holds %d callers, want none", n)
	}
}
