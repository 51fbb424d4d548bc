package catalog

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sync/singleflight"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// DefaultCacheEntries bounds the list cache: one entry per backend, list method and, for
// private lists, caller.
const DefaultCacheEntries = 4096

// MaxCacheEntries bounds CacheConfig.MaxEntries.
const MaxCacheEntries = 1 << 20

// DefaultCacheBytes bounds the memory the list cache retains: a quarter of the chart's default
// 256 MiB container limit, which holds about two lists of 100,000 tools.
const DefaultCacheBytes = 64 << 20

// MaxCacheBytes bounds CacheConfig.MaxBytes.
const MaxCacheBytes = 64 << 30

// Estimated bookkeeping per cached list and per item beyond the item's own bytes: the entry,
// its LRU element and map slot, and each item's header (target strings and digest).
const (
	entryOverhead = 256
	itemOverhead  = int64(unsafe.Sizeof(listItem{}))
)

// CacheConfig tunes the per-replica cache of backend list results. Each backend's full list
// (all its pages) is kept for the ttlMs the backend named (docs/protocol.md §5.1); a "public" list is
// shared by every caller, a "private" one only reused for the same ListRequest.CacheKey.
// Nothing else is cached: not calls, not MRTR results, not failures.
type CacheConfig struct {
	// MaxEntries bounds the number of cached backend lists; the least recently used goes
	// first. It bounds as well each view the gateway keeps of the lists it fetched (the
	// indexes of tools' header bindings, the pin verdicts, the remembered MCP Apps list
	// failures), one entry per list, and MaxBytes bounds the memory of the first two; one
	// caller's private lists and views hold at most an eighth of each. Zero means
	// DefaultCacheEntries; at most MaxCacheEntries.
	MaxEntries int `yaml:"maxEntries"`
	// MaxBytes bounds the memory the cached lists retain, counted as each item's JSON plus its
	// bookkeeping; the least recently used lists go first. A list larger than the whole budget
	// is served but not cached. This is the bound that matters for private lists: each
	// caller's copy of a large list costs its full size. One caller's private lists hold at
	// most an eighth of the entries and of the bytes (their own oldest go first), and a private
	// list larger than that share is served but not cached. It bounds as well, with the same
	// share, the views of lists and tool search's indexes of the catalog. Zero means
	// DefaultCacheBytes; at most MaxCacheBytes.
	MaxBytes int64 `yaml:"maxBytes"`
	// Disabled turns list caching off. Concurrent identical requests are still collapsed.
	Disabled bool `yaml:"disabled"`
}

// Problems reports every problem of the cache configuration, each a *configerr.Error under the
// key path "cache"; it changes nothing.
func (c *CacheConfig) Problems() []error {
	var errs []error
	if c.MaxEntries < 0 || c.MaxEntries > MaxCacheEntries {
		errs = append(errs, configerr.At("cache.maxEntries", "%d: want 0..%d", c.MaxEntries, MaxCacheEntries))
	}
	if c.MaxBytes < 0 || c.MaxBytes > MaxCacheBytes {
		errs = append(errs, configerr.At("cache.maxBytes", "%d: want 0..%d (64 GiB)", c.MaxBytes, int64(MaxCacheBytes)))
	}
	return errs
}

// partKey identifies one backend's list; caller is empty for a public entry.
type partKey struct {
	upstream string
	list     byte
	version  string
	caller   string
}

// listKey is one backend's list method, whatever the protocol version and caller.
type listKey struct {
	upstream string
	list     byte
}

// cachedList is one cached backend list.
type cachedList struct {
	part    *part
	expires time.Time
}

// retainedBytes estimates the memory p keeps alive while cached.
func (p *part) retainedBytes() int64 {
	n := int64(entryOverhead) + int64(cap(p.items)-len(p.items))*itemOverhead + p.itemBytes(0)
	// Pin verdicts (pins.go): a map entry and the current fingerprint per listed item; the
	// keys share the items' names.
	n += int64(len(p.pins)) * pinVerdictBytes
	for k, v := range p.spellings {
		n += indexItemBytes + int64(len(k)+len(v))
	}
	n += templatesBytes(p.templates)
	return n
}

// itemBytes estimates the memory p.items[from:] keep alive: each item's JSON, name and header.
func (p *part) itemBytes(from int) int64 {
	n := int64(len(p.items)-from) * itemOverhead
	for i := from; i < len(p.items); i++ {
		it := &p.items[i]
		n += int64(cap(it.raw) + len(it.target.Name))
	}
	return n
}

// listCache holds backend lists until their ttlMs passes, collapsing concurrent misses.
type listCache struct {
	disabled bool
	now      func() time.Time
	onResult func(hit bool)
	flight   singleflight.Group

	mu sync.Mutex
	// lists are the cached lists, bounded in number and bytes, each caller's private ones by
	// its share (share.go); an entry's size is retainedBytes of its part.
	lists *sharelru.Cache[partKey, cachedList]
	// maxEntries and maxBytes are the lists' bounds, which the views of lists share.
	maxEntries int
	maxBytes   int64
	private    map[partKey]bool
	// gens counts each list's invalidations. A list is stored only if its count has not moved
	// since it was asked for, and concurrent misses are collapsed only within one count, so an
	// answer that may predate a list_changed is neither cached nor handed to a caller that
	// asked after it.
	gens map[listKey]uint64
}

func newListCache(c CacheConfig, now func() time.Time, onResult func(bool)) *listCache {
	maxEntries, maxBytes := c.MaxEntries, c.MaxBytes
	if maxEntries == 0 {
		maxEntries = DefaultCacheEntries
	}
	if maxBytes == 0 {
		maxBytes = DefaultCacheBytes
	}
	return &listCache{disabled: c.Disabled, now: now, onResult: onResult, maxEntries: maxEntries, maxBytes: maxBytes,
		lists: newShared[partKey, cachedList](maxEntries, maxBytes, nil), private: make(map[partKey]bool),
		gens: make(map[listKey]uint64)}
}

// get returns a cached list with ttlMs set to the time it has left.
func (c *listCache) get(k partKey) *part {
	if c.disabled {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lists.Get(k)
	if !ok {
		return nil
	}
	left := e.expires.Sub(c.now())
	if left <= 0 {
		c.lists.Remove(k)
		return nil
	}
	p := e.part
	return &part{items: p.items, private: p.private, pins: p.pins, spellings: p.spellings, templates: p.templates,
		ttlMs: max(left.Milliseconds(), 1)}
}

// generation returns the invalidation count of k's list, to hand back to put.
func (c *listCache) generation(k partKey) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[listKey{k.upstream, k.list}]
}

// put stores p when it may be reused: a positive ttlMs, a caller key for a private list, and
// no invalidation of the list since generation gen, when it was asked for. share names the
// caller whose share a private list counts against (its identity, whatever its token).
func (c *listCache) put(k partKey, share string, p *part, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	shared := k
	shared.caller = ""
	c.private[shared] = p.private
	if c.disabled || p.absent || p.ttlMs <= 0 || (p.private && k.caller == "") ||
		c.gens[listKey{k.upstream, k.list}] != gen {
		return
	}
	if !p.private {
		k.caller = ""
	}
	// A list too large for the cache, or for the caller's share, is served to this caller but
	// not cached: caching it would evict everything else.
	c.lists.Put(k, cachedList{part: p, expires: c.now().Add(time.Duration(p.ttlMs) * time.Millisecond)}, shareOf(k, share), p.retainedBytes())
}

// retained reports the cached lists' estimated bytes and their number.
func (c *listCache) retained() (bytes int64, entries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists.Bytes(), c.lists.Len()
}

// invalidate drops every cached copy of upstream's lists (each protocol version, each caller)
// and moves their generations on, so answers already on their way are not stored. It returns
// how many entries it dropped.
func (c *listCache) invalidate(upstream string, lists []byte) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range lists {
		c.gens[listKey{upstream, l}]++
	}
	return c.lists.RemoveIf(func(k partKey) bool { return k.upstream == upstream && slices.Contains(lists, k.list) })
}

// wasPrivate reports whether the backend's last answer for this list was private, so
// concurrent misses from different callers are collapsed only for public lists.
func (c *listCache) wasPrivate(k partKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	k.caller = ""
	return c.private[k]
}

func (c *listCache) report(hit bool) {
	if c.onResult != nil {
		c.onResult(hit)
	}
}

// flightResult is the outcome of one collapsed backend list request.
type flightResult struct {
	part   *part
	caller string
}

// A backend's full list comes from the cache (cachedPart) or, on a miss, from the backend
// (missedPart). Concurrent misses share one backend request; a private answer is handed only
// to the caller it was fetched for, the others fetch their own.

// cachedPart returns the backend's list from the cache (public, or this caller's private copy),
// reported as a hit, or nil.
func (c *Catalog) cachedPart(b *backend.Backend, spec listSpec, q *listQuery) *part {
	lc := c.cache
	pub := partKey{upstream: b.Name(), list: spec.index, version: q.version}
	p := lc.get(pub)
	if p == nil && q.cacheKey != "" {
		own := pub
		own.caller = privateKey(b, q.cacheKey, q.subject, q.subjectKey)
		p = lc.get(own)
	}
	if p != nil {
		lc.report(true)
	}
	return p
}

// missedPart fetches the backend's list after a cache miss, which it reports.
func (c *Catalog) missedPart(ctx context.Context, b *backend.Backend, spec listSpec, q *listQuery) (*part, error) {
	lc := c.cache
	pub := partKey{upstream: b.Name(), list: spec.index, version: q.version}
	own := pub
	own.caller = privateKey(b, q.cacheKey, q.subject, q.subjectKey)
	gen := lc.generation(pub)
	fk := "p\x00" + b.Name() + "\x00" + spec.method + "\x00" + q.version + "\x00" + strconv.FormatUint(gen, 10)
	if lc.wasPrivate(pub) {
		if own.caller == "" {
			lc.report(false)
			return c.fetchPart(ctx, b, spec, q, own, gen)
		}
		fk = "c\x00" + own.caller + "\x00" + fk
	}
	initiated := false
	ch := lc.flight.DoChan(fk, func() (any, error) {
		initiated = true
		p, err := c.fetchPart(ctx, b, spec, q, own, gen)
		return flightResult{part: p, caller: own.caller}, err
	})
	// Reported once the miss has joined (or begun) the flight: whoever has seen it reported
	// finds it sharing the request in flight.
	lc.report(false)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		fr, _ := res.Val.(flightResult)
		if initiated {
			return fr.part, res.Err
		}
		// Another caller's request: its failure through its own cancellation, or a private
		// answer meant for it, is not ours to use.
		if isContextErr(res.Err) || (res.Err == nil && fr.part.private && (fr.caller != own.caller || own.caller == "")) {
			return c.fetchPart(ctx, b, spec, q, own, gen)
		}
		return fr.part, res.Err
	}
}

// privateKey is the key of b's private lists for a caller: cacheKey, the caller's identity,
// and for a backend that exchanges the caller's token (RFC 8693) that token's digest as well.
// Such a backend answers the exchanged token, which follows the caller's token and its scopes,
// so a private list is reused only for the token it was fetched with: "a new token means a new
// cache" (docs/protocol.md §5.1). Other backends answer the gateway's own credential, or the
// caller's vault token for per-user OAuth, which both stay with the identity. subject is the
// caller's token, "" when no backend exchanges it, and key its backend.SubjectKey when the
// caller computed it once for its request ("" has it computed here); cacheKey "" caches no
// private list at all.
func privateKey(b *backend.Backend, cacheKey, subject, key string) string {
	if cacheKey == "" || subject == "" || !b.ExchangesTokens() {
		return cacheKey
	}
	if key == "" {
		key = backend.SubjectKey(subject)
	}
	return cacheKey + "\x00" + key
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// fetchPart asks the backend and stores the answer when it may be reused: gen is the list's
// generation from before the request was sent.
func (c *Catalog) fetchPart(ctx context.Context, b *backend.Backend, spec listSpec, q *listQuery, k partKey, gen uint64) (*part, error) {
	p, err := c.listBackend(ctx, b, spec, q)
	if err != nil {
		return nil, err
	}
	c.cache.put(k, q.cacheKey, p, gen)
	return p, nil
}
