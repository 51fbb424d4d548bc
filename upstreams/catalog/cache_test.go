package catalog

import (
	"fmt"
	"testing"
)

func TestCacheBounded(t *testing.T) {
	clock := newTestClock()
	c := newListCache(CacheConfig{MaxEntries: 2}, clock.Now, nil)
	key := func(i int) partKey { return partKey{upstream: "u", list: 1, caller: fmt.Sprint(i)} }
	for i := range 3 {
		c.put(key(i), key(i).caller, &part{ttlMs: 1000, private: true}, 0)
		if i == 1 {
			c.get(key(0)) // 0 is now more recently used than 1
		}
	}
	if c.get(key(1)) != nil || c.get(key(0)) == nil || c.get(key(2)) == nil || c.lists.Len() != 2 {
		t.Fatalf("after 3 puts into 2 slots: want the least recently used (1) evicted")
	}
}
