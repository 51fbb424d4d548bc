package authz

import (
	"crypto/sha256"
	"hash"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// tokenCache holds verified principals by the SHA-256 of their token,
// bounded in size. Only digests are kept, never a token itself (SECURITY.md):
// someone who can read the gateway's memory finds the tokens of requests in
// flight, not a store of every live one. SHA-256 is also what makes a hit
// safe without comparing tokens: two tokens never share a digest.
//
// Cost. Hashing a 1 KB token takes about 0.8 µs with SHA-NI, most of a hit.
// A per-process seeded maphash plus a constant-time comparison with the
// stored token measured 0.15 µs, but needs the token kept in memory; the
// digest keeps a hit plus the policy decision at about 0.75 µs, well within
// the 2 µs budget.
//
// Concurrency. Readers take no lock: the index is a sync.Map, whose Load
// only reads shared memory, and the entry fields readers see (key,
// principal) never change; only the used flag, and the slot under mu, do. A
// read lock would make every hit write the lock's reader count, which CPU
// profiles of the parallel benchmark showed as the largest cost once many
// requests carry the same token. Writers (put, remove) serialise on mu,
// which also guards the eviction order, so index and ring agree whenever mu
// is free. A reader may still hold an entry that a writer has just dropped;
// it is a verified entry for that very token, and the caller checks its
// expiry.
//
// Eviction is CLOCK (second chance): a hit only sets a flag, so the hot path
// allocates nothing; inserts reuse expired entries first, then the first one
// not used since the hand last passed. Each caller (issuer and subject) holds
// at most perCaller entries: a caller's token past that bound takes the slot
// of the same caller's oldest entry, so one caller presenting many valid
// tokens evicts only its own.
type tokenCache struct {
	index  sync.Map // [sha256.Size]byte → *cacheEntry
	hashes sync.Pool

	mu        sync.Mutex
	ring      []*cacheEntry // every indexed entry, at its slot; len ≤ size
	size      int
	hand      int
	perCaller int
	callers   map[string][]*cacheEntry // each caller's entries by its key (Principal.CallerKey), oldest first
}

type cacheEntry struct {
	key   [sha256.Size]byte
	p     *Principal
	owner string // the caller's key (Principal.CallerKey): the one rule every per-caller bound keys by
	slot  int    // index in ring; guarded by mu
	used  atomic.Bool
}

// cacheInitialCap is the ring's first capacity: it grows with the tokens seen, up to size, so
// a large tokenCacheSize reserves no memory the callers have not used.
const cacheInitialCap = 1024

func newTokenCache(size, perCaller int) *tokenCache {
	c := &tokenCache{ring: make([]*cacheEntry, 0, min(size, cacheInitialCap)), size: size,
		perCaller: max(perCaller, 1), callers: map[string][]*cacheEntry{}}
	c.hashes.New = func() any { return &hashState{h: sha256.New()} }
	return c
}

// hashState hashes a token without allocating: sha256.Sum256 would need a
// []byte copy of the token (about 1 KB per request), so the token is fed
// through a fixed buffer instead.
type hashState struct {
	h   hash.Hash
	buf [512]byte
	sum [sha256.Size]byte
}

// key is the SHA-256 of raw. It is computed once per request and passed to
// get, put and remove.
func (c *tokenCache) key(raw string) [sha256.Size]byte {
	st := c.hashes.Get().(*hashState)
	st.h.Reset()
	for len(raw) > 0 {
		n := copy(st.buf[:], raw)
		st.h.Write(st.buf[:n])
		raw = raw[n:]
	}
	out := [sha256.Size]byte(st.h.Sum(st.sum[:0]))
	c.hashes.Put(st)
	return out
}

func (c *tokenCache) get(key [sha256.Size]byte) (*Principal, bool) {
	v, ok := c.index.Load(key)
	if !ok {
		return nil, false
	}
	e := v.(*cacheEntry)
	// Load first: a hot token's entry is then only read, so cores serving it
	// do not keep invalidating each other's copy of the cache line.
	if !e.used.Load() {
		e.used.Store(true)
	}
	return e.p, true
}

// put caches p under key, in place of the same token's entry if there is one: in the slot of
// the caller's oldest entry when the caller holds perCaller already, in a new slot while the ring is not full, or in the
// slot CLOCK picks.
func (c *tokenCache) put(key [sha256.Size]byte, p *Principal, now time.Time) {
	e := &cacheEntry{key: key, p: p, owner: p.CallerKey()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.index.Load(key); ok {
		c.drop(v.(*cacheEntry))
	}
	if own := c.callers[e.owner]; len(own) >= c.perCaller {
		e.slot = own[0].slot
		c.index.Delete(own[0].key)
		c.forget(own[0])
	} else if len(c.ring) < c.size {
		e.slot = len(c.ring)
		c.ring = append(c.ring, nil)
	} else {
		e.slot = c.victim(now)
		c.index.Delete(c.ring[e.slot].key)
		c.forget(c.ring[e.slot])
	}
	c.ring[e.slot] = e
	c.index.Store(key, e)
	c.callers[e.owner] = append(c.callers[e.owner], e)
}

// forget drops e from its caller's entries. The caller holds mu.
func (c *tokenCache) forget(e *cacheEntry) {
	own := c.callers[e.owner]
	if i := slices.Index(own, e); i >= 0 {
		own = slices.Delete(own, i, i+1)
	}
	if len(own) == 0 {
		delete(c.callers, e.owner)
		return
	}
	c.callers[e.owner] = own
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

// remove drops key's entry.
func (c *tokenCache) remove(key [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.index.Load(key); ok {
		c.drop(v.(*cacheEntry))
	}
}

// drop takes e out of the index, its caller's list and the ring. The caller holds mu.
func (c *tokenCache) drop(e *cacheEntry) {
	c.index.Delete(e.key)
	c.forget(e)
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
