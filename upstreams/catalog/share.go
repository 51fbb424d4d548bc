package catalog

import "container/list"

// ShareDivisor sets each caller's share of the catalog's per-replica caches: the list cache, and
// the views kept of the lists (the indexes of tools' header bindings, the pin verdicts, the
// remembered MCP Apps list failures). A caller's private entries, whatever its tokens, backends
// and protocol versions, hold at most 1/ShareDivisor of a cache's entries (and of its bytes,
// for the list cache). A caller at its share makes room by evicting its own least recently used
// private entries, never another caller's, so one caller who makes the gateway hold many
// private entries cannot push out everyone else's; it takes ShareDivisor callers at their full
// share to fill a cache. Public entries (shared by every caller) count against no share. A
// private entry larger than a share is served, not cached.
const ShareDivisor = 8

// The catalog's caches, as Options.CacheEvicted names them.
const (
	// CacheList is the cache of backend lists (cache.go).
	CacheList = "list"
	// CacheHeaderIndex is the indexes of tools' header bindings and listed names (toolheaders.go).
	CacheHeaderIndex = "header_index"
	// CachePinVerdicts is the pin verdicts of the newest lists (pins.go).
	CachePinVerdicts = "pin_verdicts"
	// CacheAppFailures is the tools lists ResolveAppName could not have (apps.go).
	CacheAppFailures = "app_list_failures"
)

// sharedLRU is the entries of one cache, least recently used out first, bounded in number and,
// with maxBytes, in bytes: in total, and for each caller's private entries by its share. It is
// not safe for concurrent use: its cache holds a lock around it.
type sharedLRU[K comparable, V any] struct {
	max      int
	maxBytes int64 // 0: bounded in number only
	// onEvict, when set, is called for each entry evicted for room: own when its caller's
	// share made it go.
	onEvict func(own bool)

	entries map[K]*sharedEntry[K, V]
	lru     *list.List // of *sharedEntry[K, V], most recently used first
	bytes   int64      // sum of the entries' sizes
	// shares holds each caller's private entries; a caller is in it only while it has one, so
	// it has at most max callers.
	shares map[string]*callerShare
}

// sharedEntry is one entry of a sharedLRU.
type sharedEntry[K comparable, V any] struct {
	key   K
	val   V
	size  int64
	elem  *list.Element
	share string        // the caller whose share the entry counts against; "" when public
	own   *list.Element // in that caller's callerShare.lru; nil when public
}

// callerShare is one caller's private entries in a cache.
type callerShare struct {
	lru   *list.List // of *sharedEntry, most recently used first
	bytes int64      // sum of their sizes
}

func newSharedLRU[K comparable, V any](maxEntries int, maxBytes int64) *sharedLRU[K, V] {
	return &sharedLRU[K, V]{max: maxEntries, maxBytes: maxBytes, entries: make(map[K]*sharedEntry[K, V]),
		lru: list.New(), shares: make(map[string]*callerShare)}
}

// shareEntries is the number of private entries one caller may hold.
func (s *sharedLRU[K, V]) shareEntries() int { return max(s.max/ShareDivisor, 1) }

// shareBytes is the bytes one caller's private entries may hold (with maxBytes).
func (s *sharedLRU[K, V]) shareBytes() int64 { return s.maxBytes / ShareDivisor }

// get returns k's entry, now the most recently used in the cache and in its caller's share, or
// nil.
func (s *sharedLRU[K, V]) get(k K) *sharedEntry[K, V] {
	e := s.entries[k]
	if e == nil {
		return nil
	}
	s.lru.MoveToFront(e.elem)
	if e.own != nil {
		s.shares[e.share].lru.MoveToFront(e.own)
	}
	return e
}

// peek returns k's entry without marking it used, or nil.
func (s *sharedLRU[K, V]) peek(k K) *sharedEntry[K, V] { return s.entries[k] }

// put stores v under k, replacing what k held, counted against share's caller ("" public).
// It evicts for room: the caller's own least recently used entries while it is at its share,
// then the cache's least recently used. An entry larger than the bytes bound, or than a share
// when private, is not stored, and put reports false.
func (s *sharedLRU[K, V]) put(k K, v V, share string, size int64) bool {
	if old := s.entries[k]; old != nil {
		s.remove(old)
	}
	if s.maxBytes > 0 && (size > s.maxBytes || (share != "" && size > s.shareBytes())) {
		return false // caching it would evict everything else
	}
	s.makeRoom(share, size)
	e := &sharedEntry[K, V]{key: k, val: v, size: size}
	e.elem = s.lru.PushFront(e)
	s.entries[k] = e
	s.bytes += size
	if share != "" {
		cs := s.shares[share]
		if cs == nil {
			cs = &callerShare{lru: list.New()}
			s.shares[share] = cs
		}
		e.share, e.own = share, cs.lru.PushFront(e)
		cs.bytes += size
	}
	return true
}

// makeRoom evicts entries until one of size bytes fits.
func (s *sharedLRU[K, V]) makeRoom(share string, size int64) {
	if cs := s.shares[share]; share != "" && cs != nil {
		for cs.lru.Len() >= s.shareEntries() || (s.maxBytes > 0 && cs.bytes+size > s.shareBytes()) {
			s.remove(cs.lru.Back().Value.(*sharedEntry[K, V]))
			s.evicted(true)
		}
	}
	for s.lru.Len() >= s.max || (s.maxBytes > 0 && s.bytes+size > s.maxBytes) {
		s.remove(s.lru.Back().Value.(*sharedEntry[K, V]))
		s.evicted(false)
	}
}

// remove drops e, and forgets its caller when e was its last entry.
func (s *sharedLRU[K, V]) remove(e *sharedEntry[K, V]) {
	s.lru.Remove(e.elem)
	delete(s.entries, e.key)
	s.bytes -= e.size
	if e.own == nil {
		return
	}
	cs := s.shares[e.share]
	cs.lru.Remove(e.own)
	cs.bytes -= e.size
	e.own = nil
	if cs.lru.Len() == 0 {
		delete(s.shares, e.share)
	}
}

// removeIf drops every entry whose key drop picks, and returns how many.
func (s *sharedLRU[K, V]) removeIf(drop func(K) bool) int {
	n := 0
	for k, e := range s.entries {
		if drop(k) {
			s.remove(e)
			n++
		}
	}
	return n
}

// len is the number of entries.
func (s *sharedLRU[K, V]) len() int { return s.lru.Len() }

func (s *sharedLRU[K, V]) evicted(own bool) {
	if s.onEvict != nil {
		s.onEvict(own)
	}
}

// evictHook adapts Options.CacheEvicted to one cache; nil when it is not set.
func evictHook(hook func(cache string, own bool), cache string) func(bool) {
	if hook == nil {
		return nil
	}
	return func(own bool) { hook(cache, own) }
}
