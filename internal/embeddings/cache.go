package embeddings

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

// cache holds tool vectors by the digest of the text embedded, least recently used dropped first
// past maxBytes (4 bytes a dimension, plus entryOverhead). A new catalog version finds the
// vectors of every tool whose text did not change. Queries are never cached: a caller's queries
// would push tools' vectors out.
type cache struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	order    *list.List // of *cacheEntry, most recent first
	byKey    map[[sha256.Size]byte]*list.Element
}

type cacheEntry struct {
	key [sha256.Size]byte
	vec []float32
}

// entryOverhead is an entry's memory besides its vector: key, list element, map slot.
const entryOverhead = 128

func newCache(maxBytes int64) *cache {
	return &cache{maxBytes: maxBytes, order: list.New(), byKey: map[[sha256.Size]byte]*list.Element{}}
}

func (c *cache) get(k [sha256.Size]byte) []float32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[k]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).vec
}

// put keeps v under k and returns the cache's size.
func (c *cache) put(k [sha256.Size]byte, v []float32) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		c.order.MoveToFront(el)
		return c.bytes
	}
	size := int64(4*len(v) + entryOverhead)
	if size > c.maxBytes {
		return c.bytes
	}
	c.byKey[k] = c.order.PushFront(&cacheEntry{key: k, vec: v})
	c.bytes += size
	for c.bytes > c.maxBytes {
		last := c.order.Back()
		e := last.Value.(*cacheEntry)
		c.order.Remove(last)
		delete(c.byKey, e.key)
		c.bytes -= int64(4*len(e.vec) + entryOverhead)
	}
	return c.bytes
}
