package catalog

import "container/list"

// ShareDivisor sets each caller's share of the list cache: a caller's private lists, whatever
// its tokens, backends and protocol versions, hold at most 1/ShareDivisor of the cache's
// entries and of its bytes. A caller at its share makes room by evicting its own least
// recently used private lists, never another caller's, so one caller who makes the gateway
// cache many private lists cannot turn everyone else's hits into backend requests; it takes
// ShareDivisor callers at their full share to fill the cache. Public lists (shared by every
// caller) count against no share. A private list larger than a share is served, not cached.
const ShareDivisor = 8

// callerShare is one caller's private lists in the cache.
type callerShare struct {
	lru   *list.List // of *cacheEntry, most recently used first
	bytes int64      // sum of their sizes
}

// shareEntries is the number of private lists one caller may hold.
func (c *listCache) shareEntries() int { return max(c.max/ShareDivisor, 1) }

// shareBytes is the bytes one caller's private lists may hold.
func (c *listCache) shareBytes() int64 { return c.maxBytes / ShareDivisor }

// addToShare counts e, just cached, against share's caller ("" for a public list).
func (c *listCache) addToShare(e *cacheEntry, share string) {
	if share == "" {
		return
	}
	cs := c.shares[share]
	if cs == nil {
		cs = &callerShare{lru: list.New()}
		c.shares[share] = cs
	}
	e.share, e.own = share, cs.lru.PushFront(e)
	cs.bytes += e.size
}

// removeFromShare takes e, leaving the cache, out of its caller's share, and forgets a caller
// with nothing left cached: the index holds only callers with a cached list.
func (c *listCache) removeFromShare(e *cacheEntry) {
	if e.own == nil {
		return
	}
	cs := c.shares[e.share]
	cs.lru.Remove(e.own)
	cs.bytes -= e.size
	e.own = nil
	if cs.lru.Len() == 0 {
		delete(c.shares, e.share)
	}
}

// evicted reports one list evicted for room: own when the caller's share made it go.
func (c *listCache) evicted(own bool) {
	if c.onEvict != nil {
		c.onEvict(own)
	}
}
