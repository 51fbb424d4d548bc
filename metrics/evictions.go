package metrics

import "github.com/prometheus/client_golang/prometheus"

// NameCacheEvictions counts entries a per-replica cache evicted to make room, by cache and
// cause. It has no caller label: callers are unbounded.
const NameCacheEvictions = "mcp_gateway_cache_evictions_total"

// Caches whose evictions are counted.
const (
	// CacheList is the cache of backend lists.
	CacheList = "list"
	// CacheLegacyLevel is the pre-2026 edge's cache of sessions' log levels.
	CacheLegacyLevel = "legacy_level"
	// CacheSearchIndex is the tool search's indexes of catalog versions.
	CacheSearchIndex = "search_index"
	// CacheSearchVectors is the tool search's cache of tool vectors (search.embeddings).
	CacheSearchVectors = "search_vectors"
	// CacheHeaderIndex is the indexes of tools' header bindings and listed names, built from
	// backend lists.
	CacheHeaderIndex = "header_index"
	// CachePinVerdicts is the pin verdicts of the newest backend lists (pinning).
	CachePinVerdicts = "pin_verdicts"
	// CacheAppFailures is the remembered failures to have a backend's tools list for resolving
	// an MCP App's tool name.
	CacheAppFailures = "app_list_failures"
)

// Indices of the caches in evictionCaches and cacheEvictions.
const (
	evList = iota
	evLegacyLevel
	evSearchIndex
	evSearchVectors
	evHeaderIndex
	evPinVerdicts
	evAppFailures
)

// evictionCaches are the caches whose series exist, each at its index.
var evictionCaches = [...]string{evList: CacheList, evLegacyLevel: CacheLegacyLevel,
	evSearchIndex: CacheSearchIndex, evSearchVectors: CacheSearchVectors,
	evHeaderIndex: CacheHeaderIndex, evPinVerdicts: CachePinVerdicts, evAppFailures: CacheAppFailures}

// Causes of an eviction.
const (
	// EvictionShare: the caller was at its share of the cache and one of its own entries went.
	EvictionShare = "share"
	// EvictionTotal: the cache was full and its least recently used (or any) entry went.
	EvictionTotal = "total"
)

// cacheEvictions holds the series, created at start so that the first eviction is an increase
// from 0.
type cacheEvictions [len(evictionCaches)][2]prometheus.Counter // cache × cause (share, total)

func (r *Recorder) buildEvictions(cs *[]prometheus.Collector) {
	v := r.newCounterVec(cs, NameCacheEvictions,
		"Entries a per-replica cache evicted to make room, by cache and cause: share when the caller was at its share and lost one of its own entries, total when the whole cache was full.",
		"cache", "cause")
	for i, cache := range evictionCaches {
		for j, cause := range []string{EvictionShare, EvictionTotal} {
			r.evictions[i][j] = v.WithLabelValues(cache, cause)
		}
	}
}

// CatalogCacheEviction counts one entry evicted from the backend catalog's cache named cache
// (CacheList, CacheHeaderIndex, CachePinVerdicts or CacheAppFailures); own when its caller's
// share made it go. Another name counts nothing: the label values are a closed set.
func (r *Recorder) CatalogCacheEviction(cache string, own bool) {
	switch cache {
	case CacheList:
		r.eviction(evList, own)
	case CacheHeaderIndex:
		r.eviction(evHeaderIndex, own)
	case CachePinVerdicts:
		r.eviction(evPinVerdicts, own)
	case CacheAppFailures:
		r.eviction(evAppFailures, own)
	}
}

// LegacyLevelEviction counts one level evicted from the pre-2026 level cache; own when its
// caller's share made it go.
func (r *Recorder) LegacyLevelEviction(own bool) { r.eviction(evLegacyLevel, own) }

// SearchIndexEviction counts one catalog version's search index dropped; own when its
// caller's share made it go.
func (r *Recorder) SearchIndexEviction(own bool) { r.eviction(evSearchIndex, own) }

// SearchVectorEviction counts one tool vector dropped from the embeddings cache; own when its
// caller's share made it go.
func (r *Recorder) SearchVectorEviction(own bool) { r.eviction(evSearchVectors, own) }

func (r *Recorder) eviction(cache int, own bool) {
	if r == nil {
		return
	}
	cause := 1
	if own {
		cause = 0
	}
	r.evictions[cache][cause].Inc()
}
