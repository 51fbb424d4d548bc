package authz

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// tokenCache holds verified principals by token, bounded in size.
//
// Lookup. Entries are indexed by a 64-bit maphash of the token under a
// random seed chosen when the cache is built, and a hit is confirmed only
// when the presented token equals the stored one byte for byte, compared in
// constant time. An index collision, by chance or crafted, therefore costs a
// miss and a full verification, never another token's principal; the seed
// is never exposed, so collisions cannot be aimed at an entry.
//
// Trade-off. The index used to be the SHA-256 of the token, so that only
// digests were kept. Hashing a 1 KB token with SHA-256 takes about 0.8 µs
// even with SHA-NI, which was about 85% of a hit; maphash plus the compare
// takes about 0.15 µs. Confirming a hit against a stored SHA-256 instead of
// the token would need that same SHA-256 on every hit, so the cache now
// holds the verified tokens themselves (at most size of them, each only
// until it expires or is evicted). What this gives up: someone who can read
// the gateway's memory (a core dump) finds up to size live tokens rather
// than only those of requests in flight, and whatever the heap still holds
// of earlier ones. Tokens in the cache are never logged or put in errors.
//
// Concurrency. Readers take no lock: the index is a sync.Map, whose Load
// only reads shared memory, and the entry fields readers see (key, token,
// principal) never change; only the used flag, and the slot under mu, do. A read lock would make every hit write the lock's reader count,
// which CPU profiles of the parallel benchmark showed as the largest cost
// once many requests carry the same token. Writers (put, remove) serialise
// on mu, which also guards the eviction order, so index and ring agree
// whenever mu is free. A reader may still hold an entry that a writer has
// just dropped; it is a verified entry for that very token, and the caller
// checks its expiry.
//
// Eviction is CLOCK (second chance): a hit only sets a flag, so the hot path
// allocates nothing; inserts reuse expired entries first, then the first one
// not used since the hand last passed.
type tokenCache struct {
	seed  maphash.Seed
	index sync.Map // uint64 key → *cacheEntry

	mu   sync.Mutex
	ring []*cacheEntry // every indexed entry, at its slot; len ≤ size
	size int
	hand int
}

type cacheEntry struct {
	key   uint64
	token string
	p     *Principal
	slot  int // index in ring; guarded by mu
	used  atomic.Bool
}

func newTokenCache(size int) *tokenCache {
	return &tokenCache{seed: maphash.MakeSeed(), ring: make([]*cacheEntry, 0, size), size: size}
}

// key is the index key of raw. It is computed once per request and passed
// to get, put and remove.
func (c *tokenCache) key(raw string) uint64 { return maphash.String(c.seed, raw) }

func (c *tokenCache) get(key uint64, raw string) (*Principal, bool) {
	v, ok := c.index.Load(key)
	if !ok {
		return nil, false
	}
	e := v.(*cacheEntry)
	if !tokensEqual(e.token, raw) {
		return nil, false
	}
	// Load first: a hot token's entry is then only read, so cores serving it
	// do not keep invalidating each other's copy of the cache line.
	if !e.used.Load() {
		e.used.Store(true)
	}
	return e.p, true
}

// put caches p for raw. On an index collision with a different token the
// newer token takes the slot.
func (c *tokenCache) put(key uint64, raw string, p *Principal, now time.Time) {
	// Clone: keep only the token, not the buffer it came from.
	e := &cacheEntry{key: key, token: strings.Clone(raw), p: p}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.index.Load(key); ok {
		e.slot = v.(*cacheEntry).slot
	} else if len(c.ring) < c.size {
		e.slot = len(c.ring)
		c.ring = append(c.ring, nil)
	} else {
		e.slot = c.victim(now)
		c.index.Delete(c.ring[e.slot].key)
	}
	c.ring[e.slot] = e
	c.index.Store(key, e)
}

// victim picks a slot to overwrite. Two sweeps always suffice: the first
// clears every used flag it passes.
func (c *tokenCache) victim(now time.Time) int {
	for range 2 * len(c.ring) {
		i := c.hand
		c.hand = (c.hand + 1) % len(c.ring)
		e := c.ring[i]
		if now.After(e.p.ExpiresAt) || !e.used.Swap(false) {
			return i
		}
	}
	return c.hand
}

// remove drops raw's entry; an entry of another token under the same key
// stays.
func (c *tokenCache) remove(key uint64, raw string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.index.Load(key)
	if !ok || !tokensEqual(v.(*cacheEntry).token, raw) {
		return
	}
	e := v.(*cacheEntry)
	c.index.Delete(key)
	// Move the last entry into the hole so the ring stays packed.
	last := c.ring[len(c.ring)-1]
	last.slot = e.slot
	c.ring[e.slot] = last
	c.ring[len(c.ring)-1] = nil
	c.ring = c.ring[:len(c.ring)-1]
}

func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ring)
}

// tokensEqual reports whether a and b are equal, in time that depends only
// on their lengths (a token's length is not secret; its bytes are).
// crypto/subtle.ConstantTimeCompare would do, but goes a byte at a time and
// costs as much as the hash this cache avoids; this reads eight bytes at a
// time into four independent accumulators.
func tokensEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var v0, v1, v2, v3 uint64
	for len(a) >= 32 && len(b) >= 32 {
		v0 |= word(a[0:8]) ^ word(b[0:8])
		v1 |= word(a[8:16]) ^ word(b[8:16])
		v2 |= word(a[16:24]) ^ word(b[16:24])
		v3 |= word(a[24:32]) ^ word(b[24:32])
		a, b = a[32:], b[32:]
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		v0 |= uint64(a[i] ^ b[i])
	}
	return v0|v1|v2|v3 == 0
}

// word reads the first eight bytes of s as a little-endian integer; the
// compiler turns it into one load.
func word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
