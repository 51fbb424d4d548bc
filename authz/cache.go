package authz

import (
	"crypto/sha256"
	"hash"
	"sync"
	"sync/atomic"
	"time"
)

// tokenCache holds verified principals by SHA-256 of the token, bounded in
// size. Eviction is CLOCK (second chance): a hit only sets a flag under the
// read lock, so the hot path takes no write lock and allocates nothing;
// inserts reuse expired slots first, then the first slot not used since the
// hand last passed.
type tokenCache struct {
	mu    sync.RWMutex
	index map[[32]byte]int
	slots []cacheSlot
	n     int // slots in use, filled from the front
	hand  int
}

type cacheSlot struct {
	key  [32]byte
	p    *Principal
	used atomic.Bool
}

func newTokenCache(size int) *tokenCache {
	return &tokenCache{index: make(map[[32]byte]int, size), slots: make([]cacheSlot, size)}
}

func (c *tokenCache) get(key [32]byte) (*Principal, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, ok := c.index[key]
	if !ok {
		return nil, false
	}
	s := &c.slots[i]
	s.used.Store(true)
	return s.p, true
}

func (c *tokenCache) put(key [32]byte, p *Principal, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.index[key]; ok {
		c.slots[i].p = p
		return
	}
	i := c.n
	if c.n < len(c.slots) {
		c.n++
	} else {
		i = c.victim(now)
		delete(c.index, c.slots[i].key)
	}
	s := &c.slots[i]
	s.key, s.p = key, p
	s.used.Store(false)
	c.index[key] = i
}

// victim picks a slot to overwrite. Two sweeps always suffice: the first
// clears every used flag it passes.
func (c *tokenCache) victim(now time.Time) int {
	for range 2 * len(c.slots) {
		i := c.hand
		c.hand = (c.hand + 1) % len(c.slots)
		s := &c.slots[i]
		if now.After(s.p.ExpiresAt) || !s.used.Swap(false) {
			return i
		}
	}
	return c.hand
}

func (c *tokenCache) remove(key [32]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.index[key]
	if !ok {
		return
	}
	delete(c.index, key)
	// Move the last used slot into the hole so slots stay packed.
	last := c.n - 1
	if i != last {
		ls := &c.slots[last]
		c.slots[i].key, c.slots[i].p = ls.key, ls.p
		c.slots[i].used.Store(ls.used.Load())
		c.index[ls.key] = i
	}
	c.slots[last].p = nil
	c.n--
}

func (c *tokenCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.index)
}

// tokenHasher computes cache keys without allocating: sha256.Sum256 would
// need a []byte copy of the token (about 1 KB per request), so the token is
// fed through a pooled buffer instead.
type tokenHasher struct {
	pool sync.Pool
}

type hashState struct {
	h   hash.Hash
	buf [512]byte
	sum [sha256.Size]byte
}

func newTokenHasher() *tokenHasher {
	return &tokenHasher{pool: sync.Pool{New: func() any { return &hashState{h: sha256.New()} }}}
}

func (t *tokenHasher) sum(raw string) [sha256.Size]byte {
	st := t.pool.Get().(*hashState)
	st.h.Reset()
	for len(raw) > 0 {
		n := copy(st.buf[:], raw)
		st.h.Write(st.buf[:n])
		raw = raw[n:]
	}
	out := [sha256.Size]byte(st.h.Sum(st.sum[:0]))
	t.pool.Put(st)
	return out
}
