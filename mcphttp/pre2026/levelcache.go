package pre2026

import (
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/sharelru"
)

// levelShareDivisor sets each caller's share of the level cache: the sessions of one caller
// (each authenticated identity; every unauthenticated caller together) hold at most
// 1/levelShareDivisor of levelCacheMax entries. A caller at its share makes room by evicting
// its own least recently cached level, never another caller's, so one caller opening many
// sessions cannot turn everyone else's cached levels into store reads. An entry is a session
// key and a level name of bounded length, so the count bounds the bytes too.
const levelShareDivisor = 16

// levelCache is the per-replica cache of sessions' levels, bounded in total and per caller.
// With a fixed time to live, the least recently cached entry is the first to expire: reading a
// level does not mark it used.
type levelCache struct {
	mu  sync.Mutex
	lru *sharelru.Cache[string, levelEntry] // by session key
}

// levelEntry is a cached level: "" when the session has set none.
type levelEntry struct {
	level   string
	expires time.Time
}

func newLevelCache(onEvict func(bool)) *levelCache {
	cfg := sharelru.Config{MaxEntries: levelCacheMax, ShareDivisor: levelShareDivisor}
	if onEvict != nil {
		cfg.OnEvict = func(c sharelru.Cause) { onEvict(c == sharelru.Share) }
	}
	return &levelCache{lru: sharelru.New[string, levelEntry](cfg)}
}

// get returns the session's cached level while it is fresh at now.
func (c *levelCache) get(key string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Peek(key)
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
	e := levelEntry{level: level, expires: expires}
	if c.lru.Update(key, e) || !add {
		return
	}
	// Every caller has a share, the unauthenticated ones ("") together too: none is public.
	c.lru.Put(key, e, "caller:"+caller, 0)
}
