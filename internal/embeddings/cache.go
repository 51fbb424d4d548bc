package embeddings

import (
	"crypto/sha256"
	"sync"

	"github.com/mcp-gateway/gateway/internal/sharelru"
)

// cache holds tool vectors by the digest of the text embedded, least recently used dropped first
// past maxBytes (4 bytes a dimension, plus entryOverhead). A new catalog version finds the
// vectors of every tool whose text did not change. Queries are never cached: a caller's queries
// would push tools' vectors out. The vectors first embedded for one caller's private catalog
// hold at most 1/ShareDivisor of maxBytes, their own least recently used dropped first, so a
// caller whose private lists keep changing cannot push out the vectors of everyone else; a vector
// a public catalog uses becomes public (see get).
type cache struct {
	mu       sync.Mutex
	maxBytes int64
	lru      *sharelru.Cache[[sha256.Size]byte, []float32]
	onEvict  func(own bool) // nil counts nothing
}

// ShareDivisor sets each caller's share of the vector cache (see cache).
const ShareDivisor = sharelru.CallerShareDivisor

// entryOverhead is an entry's memory besides its vector: key, list element, map slot.
const entryOverhead = 128

func newCache(maxBytes int64, onEvict func(own bool)) *cache {
	c := &cache{maxBytes: maxBytes, onEvict: onEvict}
	c.lru = sharelru.New[[sha256.Size]byte, []float32](sharelru.Config{MaxBytes: maxBytes,
		ShareDivisor: ShareDivisor, OnEvict: c.evicted})
	return c
}

// get is the vector kept under k, if any, used for owner's catalog ("" a public one).
func (c *cache) get(k [sha256.Size]byte, owner string) []float32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, _ := c.use(k, owner)
	return v
}

// use marks k's vector as just used for owner's catalog ("" a public one). A vector a public
// catalog uses leaves its caller's share and becomes public: that caller's churn must not drop
// what every caller's searches rank with. c.mu is held.
func (c *cache) use(k [sha256.Size]byte, owner string) ([]float32, bool) {
	v, ok := c.lru.Get(k)
	if ok && owner == "" {
		c.lru.Publish(k)
	}
	return v, ok
}

// put keeps v under k, counted against owner's share when owner is not "", and returns the
// cache's size.
func (c *cache) put(k [sha256.Size]byte, v []float32, owner string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.use(k, owner); !ok {
		c.lru.Put(k, v, owner, int64(4*len(v)+entryOverhead))
	}
	return c.lru.Bytes()
}

// evicted counts one eviction for room; c.mu is held.
func (c *cache) evicted(cause sharelru.Cause) {
	if c.onEvict != nil {
		c.onEvict(cause == sharelru.Share)
	}
}
