package metrics

import "testing"

// TestCacheEvictions: each cache's evictions move their own series, by cause, and every series
// exists at 0 before the first eviction.
func TestCacheEvictions(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	assertSeries(t, reg, NameCacheEvictions, map[string]float64{
		`{cache="list",cause="share"}`: 0, `{cache="list",cause="total"}`: 0,
		`{cache="legacy_level",cause="share"}`: 0, `{cache="legacy_level",cause="total"}`: 0,
		`{cache="search_index",cause="share"}`: 0, `{cache="search_index",cause="total"}`: 0,
		`{cache="search_vectors",cause="share"}`: 0, `{cache="search_vectors",cause="total"}`: 0,
		`{cache="header_index",cause="share"}`: 0, `{cache="header_index",cause="total"}`: 0,
		`{cache="pin_verdicts",cause="share"}`: 0, `{cache="pin_verdicts",cause="total"}`: 0,
		`{cache="app_list_failures",cause="share"}`: 0, `{cache="app_list_failures",cause="total"}`: 0})
	r.CatalogCacheEviction(CacheList, true)
	r.CatalogCacheEviction(CacheList, true)
	r.CatalogCacheEviction(CacheList, false)
	r.LegacyLevelEviction(true)
	r.SearchIndexEviction(false)
	r.SearchVectorEviction(true)
	r.CatalogCacheEviction(CacheList, false)
	r.CatalogCacheEviction(CacheHeaderIndex, true)
	r.CatalogCacheEviction(CachePinVerdicts, false)
	r.CatalogCacheEviction(CacheAppFailures, true)
	r.CatalogCacheEviction("unknown", true) // not a series: counts nothing
	assertSeries(t, reg, NameCacheEvictions, map[string]float64{
		`{cache="list",cause="share"}`: 2, `{cache="list",cause="total"}`: 2,
		`{cache="legacy_level",cause="share"}`: 1, `{cache="legacy_level",cause="total"}`: 0,
		`{cache="search_index",cause="share"}`: 0, `{cache="search_index",cause="total"}`: 1,
		`{cache="search_vectors",cause="share"}`: 1, `{cache="search_vectors",cause="total"}`: 0,
		`{cache="header_index",cause="share"}`: 1, `{cache="header_index",cause="total"}`: 0,
		`{cache="pin_verdicts",cause="share"}`: 0, `{cache="pin_verdicts",cause="total"}`: 1,
		`{cache="app_list_failures",cause="share"}`: 1, `{cache="app_list_failures",cause="total"}`: 0})
	var none *Recorder
	none.CatalogCacheEviction(CacheHeaderIndex, true) // a nil recorder records nothing
}
