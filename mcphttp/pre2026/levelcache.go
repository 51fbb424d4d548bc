package pre2026

import (
	"container/list"
	"sync"
	"time"
)

// levelShareDivisor sets each caller's share of the level cache: the sessions of one caller
// (each authenticated identity; every unauthenticated caller together) hold at most
// 1/levelShareDivisor of levelCacheMax entries. A caller at its share makes room by evicting
// its own least recently cached level, never another caller's, so one caller opening many
// sessions cannot turn everyone else's cached levels into store reads. An entry is a session
// key and a level name of bounded length, so the count bounds the bytes too.
const levelShareDivisor = 16

// levelCache is the per-replica cache of sessions' levels, bounded in total and per caller.
type levelCache struct {
	onEvict func(own bool) // counts evictions for room; nil counts nothing

	mu      sync.Mutex
	entries map[string]*levelEntry // by session key
	order   *list.List             // of *levelEntry, least recently cached first
	// callers holds each caller's entries, least recently cached first; a caller is in it
	// only while it has an entry, so it has at most levelCacheMax callers.
	callers map[string]*list.List
}

// levelEntry is a cached level: "" when the session has set none.
type levelEntry struct {
	key, caller, level string
	expires            time.Time
	elem, own          *list.Element // in order and in callers[caller]
}

func newLevelCache(onEvict func(bool)) *levelCache {
	return &levelCache{onEvict: onEvict, entries: map[string]*levelEntry{}, order: list.New(), callers: map[string]*list.List{}}
}

// get returns the session's cached level while it is fresh at now.
func (c *levelCache) get(key string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.expires) {
		return "", false
	}
	return e.level, true
}

// put caches the session's level until expires, as caller's; add false only refreshes an
// entry already there (a notice from another replica does not know the caller).
func (c *levelCache) put(key, caller, level string, expires time.Time, add bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		e.level, e.expires = level, expires
		c.order.MoveToBack(e.elem)
		c.callers[e.caller].MoveToBack(e.own)
		return
	}
	if !add {
		return
	}
	if own := c.callers[caller]; own != nil {
		for own.Len() >= levelCacheMax/levelShareDivisor {
			c.remove(own.Front().Value.(*levelEntry))
			c.evicted(true)
		}
	}
	// With a fixed time to live, the least recently cached entry is the first to expire.
	for c.order.Len() >= levelCacheMax {
		c.remove(c.order.Front().Value.(*levelEntry))
		c.evicted(false)
	}
	own := c.callers[caller]
	if own == nil {
		own = list.New()
		c.callers[caller] = own
	}
	e := &levelEntry{key: key, caller: caller, level: level, expires: expires}
	e.elem, e.own = c.order.PushBack(e), own.PushBack(e)
	c.entries[key] = e
}

// remove drops e, and its caller from the index when e was its last entry.
func (c *levelCache) remove(e *levelEntry) {
	delete(c.entries, e.key)
	c.order.Remove(e.elem)
	own := c.callers[e.caller]
	own.Remove(e.own)
	if own.Len() == 0 {
		delete(c.callers, e.caller)
	}
}

func (c *levelCache) evicted(own bool) {
	if c.onEvict != nil {
		c.onEvict(own)
	}
}
