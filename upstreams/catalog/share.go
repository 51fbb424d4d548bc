package catalog

import "github.com/mcp-gateway/gateway/internal/sharelru"

// ShareDivisor sets each caller's share of the catalog's per-replica caches: the list cache, and
// the views kept of the lists (the indexes of tools' header bindings, the pin verdicts, the
// remembered MCP Apps list failures). A caller's private entries, whatever its tokens, backends
// and protocol versions, hold at most 1/ShareDivisor of a cache's entries (and of its bytes,
// for the list cache). A caller at its share makes room by evicting its own least recently used
// private entries, never another caller's, so one caller who makes the gateway hold many
// private entries cannot push out everyone else's; it takes ShareDivisor callers at their full
// share to fill a cache. Public entries (shared by every caller) count against no share. A
// private entry larger than a share is served, not cached.
const ShareDivisor = sharelru.CallerShareDivisor

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

// newShared returns one of the catalog's caches: at most maxEntries entries and, with maxBytes,
// maxBytes bytes, each caller's private entries by its share. It is not safe for concurrent
// use: its cache holds a lock around it.
func newShared[K comparable, V any](maxEntries int, maxBytes int64, onEvict func(sharelru.Cause)) *sharelru.Cache[K, V] {
	return sharelru.New[K, V](sharelru.Config{MaxEntries: maxEntries, MaxBytes: maxBytes,
		ShareDivisor: ShareDivisor, OnEvict: onEvict})
}

// shareOf is whose share an entry kept under k counts against: caller's for a private entry (k
// has a caller), none for a public one.
func shareOf(k partKey, caller string) string {
	if k.caller == "" {
		return ""
	}
	return caller
}

// evictHook adapts Options.CacheEvicted to one cache; nil when it is not set.
func evictHook(hook func(cache string, own bool), cache string) func(sharelru.Cause) {
	if hook == nil {
		return nil
	}
	return func(c sharelru.Cause) { hook(cache, c == sharelru.Share) }
}
