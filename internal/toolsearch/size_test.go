package toolsearch

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestBytesCountsWhatTheIndexHolds: an index's estimate covers its names and grows with its
// tools and with the words their texts index (the postings), so a catalog of long texts is
// counted larger than one of the same tools with short texts.
func TestBytesCountsWhatTheIndexHolds(t *testing.T) {
	catalog := func(n, words int) []Tool {
		tools := make([]Tool, n)
		for i := range tools {
			var desc strings.Builder
			for w := range words {
				fmt.Fprintf(&desc, "word%dx%d ", i, w)
			}
			tools[i] = Tool{Name: fmt.Sprintf("be__tool_%d", i), Description: desc.String(), Backend: "be"}
		}
		return tools
	}
	short, many, long := NewBM25(catalog(50, 2)), NewBM25(catalog(100, 2)), NewBM25(catalog(50, 40))
	names := int64(0)
	for _, n := range short.names {
		names += int64(len(n))
	}
	if short.Bytes() <= names {
		t.Fatalf("an index of names of %d bytes is estimated at %d", names, short.Bytes())
	}
	if many.Bytes() <= short.Bytes() || long.Bytes() <= short.Bytes() {
		t.Fatalf("estimates: 50 tools %d, 100 tools %d, 50 tools with long texts %d: want the last two larger",
			short.Bytes(), many.Bytes(), long.Bytes())
	}
	// Each of the long texts' 2,000 distinct words holds a posting and a vocabulary entry.
	if d := long.Bytes() - short.Bytes(); d < 50*38*(postingBytes+stringHeader) {
		t.Fatalf("1,900 more indexed words add only %d bytes", d)
	}
}

// TestBytesEstimateMatchesHeap: over the captured catalog, the estimate is within a quarter
// above or half below what the indexes hold on the heap, so a cache bounded by it holds about
// what its bound says.
func TestBytesEstimateMatchesHeap(t *testing.T) {
	var tools []Tool
	for _, e := range loadCatalog(t) {
		tools = append(tools, e.tool)
	}
	// The heap is measured in the package's test process, where memory other tests left (a
	// pool's victim cache, a finished test's goroutines) may be freed while the indexes are
	// built and hide their growth: a measurement that finds the estimate out of its bounds is
	// made again, up to three times, and the test fails only when none agrees.
	const indexes = 10
	var grow, est int64
	for attempt := range 3 {
		var kept [indexes]*BM25
		before := heapAlloc()
		for i := range kept {
			kept[i] = NewBM25(tools)
			kept[i].Search("create an issue", 5, nil) // its pool keeps one search's buffers
		}
		grow = (heapAlloc() - before) / indexes
		est = kept[0].Bytes()
		runtime.KeepAlive(kept)
		t.Logf("attempt %d: an index of %d tools: %d KiB by the estimate, %d KiB of heap", attempt+1, len(tools), est>>10, grow>>10)
		if grow <= est+est/4 && est <= 2*grow {
			return
		}
	}
	t.Fatalf("an index holds %d bytes of heap, its estimate is %d", grow, est)
}

// heapAlloc is the bytes of live heap objects after two collections (the second frees what
// sync.Pools kept in their victim caches through the first).
func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
