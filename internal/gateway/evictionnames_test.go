package gateway

import (
	"testing"

	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams/catalog"
)

// TestCatalogCacheNamesAreMetricLabels: the names the catalog reports its evictions under are
// the labels the recorder counts them under; a name it does not know would count nothing.
func TestCatalogCacheNamesAreMetricLabels(t *testing.T) {
	for _, pair := range [][2]string{
		{catalog.CacheList, metrics.CacheList},
		{catalog.CacheHeaderIndex, metrics.CacheHeaderIndex},
		{catalog.CachePinVerdicts, metrics.CachePinVerdicts},
		{catalog.CacheAppFailures, metrics.CacheAppFailures},
	} {
		if pair[0] != pair[1] {
			t.Errorf("catalog reports %q, the metric counts %q", pair[0], pair[1])
		}
	}
}
