// Package sharelru is a least-recently-used cache in which each caller's private entries hold
// at most a share of the cache, so that one caller who makes the gateway hold many entries
// cannot push out everyone else's.
//
// The rules:
//   - The cache holds at most MaxEntries entries and MaxBytes bytes (each bound when set).
//   - A caller's private entries hold at most 1/ShareDivisor of each bound (at least one entry).
//   - A caller at its share makes room by evicting its own least recently used private entry,
//     never another caller's; only then does the cache evict its least recently used entry,
//     whoever's it is, to stay within its own bounds.
//   - A public entry (no caller) counts against no share; Publish makes a private entry public
//     once something every caller shares uses it.
//   - An entry larger than the bytes bound, or than a share when private, is not stored.
//   - Each eviction for room is reported with its cause.
//
// A Cache is not safe for concurrent use: its owner holds a lock around it.
package sharelru

import "container/list"

// CallerShareDivisor is the share the gateway gives one caller of what every caller shares on a
// replica: an eighth (1/CallerShareDivisor) of the catalog's caches, of tool search's vector
// cache and texts, and of the interceptors' slots and answers, so that seven callers holding
// their shares still leave another caller room. Each of those uses this constant, so the one
// share is written once.
const CallerShareDivisor = 8

// Cause says why an entry was evicted for room.
type Cause uint8

const (
	// Full: the cache as a whole was at a bound.
	Full Cause = iota + 1
	// Share: the entry's caller was at its share.
	Share
)

// Config bounds a Cache.
type Config struct {
	// MaxEntries bounds the number of entries; 0: bounded in bytes only.
	MaxEntries int
	// MaxBytes bounds the sum of the entries' sizes; 0: bounded in number only.
	MaxBytes int64
	// ShareDivisor sets each caller's share: its private entries hold at most
	// 1/ShareDivisor of MaxEntries (at least one) and of MaxBytes. It must be at least 1.
	ShareDivisor int
	// OnEvict, when set, is called for each entry evicted for room, with the cause.
	OnEvict func(Cause)
}

// Cache holds entries of type V by keys of type K, least recently used out first, each
// private entry counted against its caller's share.
type Cache[K comparable, V any] struct {
	cfg     Config
	entries map[K]*entry[K, V]
	lru     *list.List // of *entry[K, V], most recently used first
	bytes   int64      // sum of the entries' sizes
	// shares holds each caller's private entries; a caller is in it only while it has one,
	// so it never holds more callers than the cache holds entries.
	shares map[string]*share
}

type entry[K comparable, V any] struct {
	key    K
	val    V
	size   int64
	elem   *list.Element
	caller string        // whose share the entry counts against; "" when public
	own    *list.Element // in that caller's share.lru; nil when public
}

// share is one caller's private entries.
type share struct {
	lru   *list.List // most recently used first
	bytes int64
}

// New returns an empty cache bounded by cfg.
func New[K comparable, V any](cfg Config) *Cache[K, V] {
	return &Cache[K, V]{cfg: cfg, entries: make(map[K]*entry[K, V]), lru: list.New(),
		shares: make(map[string]*share)}
}

// OnEvict sets the function told of each eviction for room (nil: none).
func (c *Cache[K, V]) OnEvict(f func(Cause)) { c.cfg.OnEvict = f }

// ShareEntries is the number of private entries one caller may hold (0: no count bound).
func (c *Cache[K, V]) ShareEntries() int {
	if c.cfg.MaxEntries == 0 {
		return 0
	}
	return max(c.cfg.MaxEntries/c.cfg.ShareDivisor, 1)
}

// ShareBytes is the bytes one caller's private entries may hold (0: no bytes bound).
func (c *Cache[K, V]) ShareBytes() int64 { return c.cfg.MaxBytes / int64(c.cfg.ShareDivisor) }

// Get returns k's value, now the most recently used in the cache and in its caller's share.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	e := c.entries[k]
	if e == nil {
		var zero V
		return zero, false
	}
	c.touch(e)
	return e.val, true
}

// Peek returns k's value without marking it used.
func (c *Cache[K, V]) Peek(k K) (V, bool) {
	e := c.entries[k]
	if e == nil {
		var zero V
		return zero, false
	}
	return e.val, true
}

// Update replaces k's value in place, keeping its caller and size, and marks it used. It
// reports whether k was there.
func (c *Cache[K, V]) Update(k K, v V) bool {
	e := c.entries[k]
	if e == nil {
		return false
	}
	e.val = v
	c.touch(e)
	return true
}

// Publish makes k's entry public: it leaves its caller's share, so that caller's churn no
// longer evicts what every caller uses. It reports whether k was there.
func (c *Cache[K, V]) Publish(k K) bool {
	e := c.entries[k]
	if e == nil {
		return false
	}
	if e.own != nil {
		c.leaveShare(e)
	}
	return true
}

// Put stores v of size bytes under k, replacing what k held, counted against caller's share
// ("" public). It evicts for room: the caller's own least recently used entries while it is at
// its share, then the cache's least recently used. An entry larger than MaxBytes, or than a
// share when private, is not stored, and Put reports false.
func (c *Cache[K, V]) Put(k K, v V, caller string, size int64) bool {
	if old := c.entries[k]; old != nil {
		c.remove(old)
	}
	if c.cfg.MaxBytes > 0 && (size > c.cfg.MaxBytes || (caller != "" && size > c.ShareBytes())) {
		return false // caching it would evict everything else
	}
	c.makeRoom(caller, size)
	e := &entry[K, V]{key: k, val: v, size: size}
	e.elem = c.lru.PushFront(e)
	c.entries[k] = e
	c.bytes += size
	if caller != "" {
		s := c.shares[caller]
		if s == nil {
			s = &share{lru: list.New()}
			c.shares[caller] = s
		}
		e.caller, e.own = caller, s.lru.PushFront(e)
		s.bytes += size
	}
	return true
}

// Resize sets the size of k's entry, what it holds having grown or shrunk, as a Put of it
// again would: counted against the same caller's share (none when public), evicting for room,
// and dropping the entry itself when it no longer fits (larger than MaxBytes, or than a share
// when private). The entry is marked used. It reports whether k is held afterwards.
func (c *Cache[K, V]) Resize(k K, size int64) bool {
	e := c.entries[k]
	if e == nil {
		return false
	}
	caller := e.caller
	c.remove(e)
	return c.Put(k, e.val, caller, size)
}

// Remove drops k's entry, and reports whether it was there. A removal is not an eviction for
// room: OnEvict is not told.
func (c *Cache[K, V]) Remove(k K) bool {
	e := c.entries[k]
	if e == nil {
		return false
	}
	c.remove(e)
	return true
}

// RemoveIf drops every entry whose key drop picks, and returns how many. A removal is not an
// eviction for room: OnEvict is not told.
func (c *Cache[K, V]) RemoveIf(drop func(K) bool) int {
	n := 0
	for k, e := range c.entries {
		if drop(k) {
			c.remove(e)
			n++
		}
	}
	return n
}

// Len is the number of entries.
func (c *Cache[K, V]) Len() int { return c.lru.Len() }

// Bytes is the sum of the entries' sizes.
func (c *Cache[K, V]) Bytes() int64 { return c.bytes }

// Callers is the number of callers holding private entries.
func (c *Cache[K, V]) Callers() int { return len(c.shares) }

// Usage is the number and bytes of caller's private entries.
func (c *Cache[K, V]) Usage(caller string) (entries int, bytes int64) {
	if s := c.shares[caller]; s != nil {
		return s.lru.Len(), s.bytes
	}
	return 0, 0
}

func (c *Cache[K, V]) touch(e *entry[K, V]) {
	c.lru.MoveToFront(e.elem)
	if e.own != nil {
		c.shares[e.caller].lru.MoveToFront(e.own)
	}
}

// makeRoom evicts entries until one of size bytes, counted against caller's share, fits.
func (c *Cache[K, V]) makeRoom(caller string, size int64) {
	if s := c.shares[caller]; caller != "" && s != nil {
		for (c.cfg.MaxEntries > 0 && s.lru.Len() >= c.ShareEntries()) ||
			(c.cfg.MaxBytes > 0 && s.bytes+size > c.ShareBytes()) {
			c.remove(s.lru.Back().Value.(*entry[K, V]))
			c.evicted(Share)
		}
	}
	for (c.cfg.MaxEntries > 0 && c.lru.Len() >= c.cfg.MaxEntries) ||
		(c.cfg.MaxBytes > 0 && c.bytes+size > c.cfg.MaxBytes) {
		c.remove(c.lru.Back().Value.(*entry[K, V]))
		c.evicted(Full)
	}
}

// remove drops e, and forgets its caller when e was its last entry.
func (c *Cache[K, V]) remove(e *entry[K, V]) {
	c.lru.Remove(e.elem)
	delete(c.entries, e.key)
	c.bytes -= e.size
	if e.own != nil {
		c.leaveShare(e)
	}
}

// leaveShare takes e out of its caller's share, and forgets the caller when e was its last.
func (c *Cache[K, V]) leaveShare(e *entry[K, V]) {
	s := c.shares[e.caller]
	s.lru.Remove(e.own)
	s.bytes -= e.size
	if s.lru.Len() == 0 {
		delete(c.shares, e.caller)
	}
	e.caller, e.own = "", nil
}

func (c *Cache[K, V]) evicted(cause Cause) {
	if c.cfg.OnEvict != nil {
		c.cfg.OnEvict(cause)
	}
}
