package embeddings

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

// cache holds tool vectors by the digest of the text embedded, least recently used dropped first
// past maxBytes (4 bytes a dimension, plus entryOverhead). A new catalog version finds the
// vectors of every tool whose text did not change. Queries are never cached: a caller's queries
// would push tools' vectors out. The vectors first embedded for one caller's private catalog
// hold at most 1/ShareDivisor of maxBytes, their own least recently used dropped first, so a
// caller whose private lists keep changing cannot push out the vectors of everyone else; a vector
// a public catalog uses becomes public (see use).
type cache struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	order    *list.List // of *cacheEntry, most recent first
	byKey    map[[sha256.Size]byte]*list.Element
	// owners holds each caller's entries; a caller is in it only while it has one, so it has
	// at most as many callers as the cache has entries.
	owners  map[string]*ownerShare
	onEvict func(own bool) // nil counts nothing
}

type cacheEntry struct {
	key   [sha256.Size]byte
	vec   []float32
	owner string        // the caller of the private catalog it was embedded for; "" public
	own   *list.Element // in owners[owner].order; nil when public
}

// ShareDivisor sets each caller's share of the vector cache (see cache).
const ShareDivisor = 8

// ownerShare is one caller's entries, most recent first, and their bytes.
type ownerShare struct {
	order *list.List
	bytes int64
}

// entryOverhead is an entry's memory besides its vector: key, list element, map slot.
const entryOverhead = 128

func newCache(maxBytes int64, onEvict func(own bool)) *cache {
	return &cache{maxBytes: maxBytes, order: list.New(), byKey: map[[sha256.Size]byte]*list.Element{},
		owners: map[string]*ownerShare{}, onEvict: onEvict}
}

// get is the vector kept under k, if any, used for owner's catalog ("" a public one; see use).
func (c *cache) get(k [sha256.Size]byte, owner string) []float32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[k]
	if !ok {
		return nil
	}
	return c.use(el, owner).vec
}

// use marks el as just used for owner's catalog ("" a public one), in the cache's order and in
// its owner's. A vector a public catalog uses leaves its caller's share and becomes public: that
// caller's churn must not drop what every caller's searches rank with.
func (c *cache) use(el *list.Element, owner string) *cacheEntry {
	c.order.MoveToFront(el)
	e := el.Value.(*cacheEntry)
	if e.own == nil {
		return e
	}
	os := c.owners[e.owner]
	if owner != "" {
		os.order.MoveToFront(e.own)
		return e
	}
	os.order.Remove(e.own)
	os.bytes -= int64(4*len(e.vec) + entryOverhead)
	if os.order.Len() == 0 {
		delete(c.owners, e.owner)
	}
	e.owner, e.own = "", nil
	return e
}

// put keeps v under k, counted against owner's share when owner is not "", and returns the
// cache's size.
func (c *cache) put(k [sha256.Size]byte, v []float32, owner string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		c.use(el, owner)
		return c.bytes
	}
	size := int64(4*len(v) + entryOverhead)
	if size > c.maxBytes || (owner != "" && size > c.maxBytes/ShareDivisor) {
		return c.bytes
	}
	if os := c.owners[owner]; owner != "" && os != nil {
		for os.bytes+size > c.maxBytes/ShareDivisor {
			c.remove(os.order.Back().Value.(*cacheEntry))
			c.evicted(true)
		}
	}
	for c.bytes+size > c.maxBytes {
		c.remove(c.order.Back().Value.(*cacheEntry))
		c.evicted(false)
	}
	e := &cacheEntry{key: k, vec: v, owner: owner}
	c.byKey[k] = c.order.PushFront(e)
	c.bytes += size
	if owner != "" {
		os := c.owners[owner]
		if os == nil {
			os = &ownerShare{order: list.New()}
			c.owners[owner] = os
		}
		e.own = os.order.PushFront(e)
		os.bytes += size
	}
	return c.bytes
}

// remove drops e, and its owner from the index when e was its last entry.
func (c *cache) remove(e *cacheEntry) {
	size := int64(4*len(e.vec) + entryOverhead)
	c.order.Remove(c.byKey[e.key])
	delete(c.byKey, e.key)
	c.bytes -= size
	if e.own == nil {
		return
	}
	os := c.owners[e.owner]
	os.order.Remove(e.own)
	os.bytes -= size
	if os.order.Len() == 0 {
		delete(c.owners, e.owner)
	}
}

func (c *cache) evicted(own bool) {
	if c.onEvict != nil {
		c.onEvict(own)
	}
}
