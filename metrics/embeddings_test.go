package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcp-gateway/gateway/internal/embeddings"
)

// TestEmbeddingsMetrics: every series exists from the start, a reason or kind outside the closed
// sets folds into _other, and the exposition lints clean.
func TestEmbeddingsMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	e, err := NewEmbeddings(reg)
	if err != nil {
		t.Fatal(err)
	}
	want := 2*2 + 2*(len(embeddings.Reasons())+1) + 2 + 1 // requests, failures and fallbacks, texts, cache
	if n := testutil.CollectAndCount(e.requests) + testutil.CollectAndCount(e.failures) + testutil.CollectAndCount(e.fallbacks) +
		testutil.CollectAndCount(e.texts) + testutil.CollectAndCount(e.cache); n != want {
		t.Errorf("%d series before any use, want %d", n, want)
	}
	e.Request("query", 30*time.Millisecond, 1, "")
	e.Request("tools", time.Second, 64, embeddings.ReasonRateLimited)
	e.Request("nonsense", time.Second, 1, "made-up reason")
	e.Fallback(embeddings.ReasonBackoff)
	e.Fallback("made-up reason")
	e.CacheBytes(4096)
	for _, c := range []struct {
		name string
		c    prometheus.Counter
		want float64
	}{
		{"query ok", e.requests.WithLabelValues("query", "ok"), 1},
		{"tools failed", e.requests.WithLabelValues("tools", "failed"), 1},
		{"_other failed", e.requests.WithLabelValues(Other, "failed"), 1},
		{"rate_limited", e.failures.WithLabelValues(embeddings.ReasonRateLimited), 1},
		{"failure _other", e.failures.WithLabelValues(Other), 1},
		{"backoff", e.fallbacks.WithLabelValues(embeddings.ReasonBackoff), 1},
		{"fallback _other", e.fallbacks.WithLabelValues(Other), 1},
		{"tool texts", e.texts.WithLabelValues("tools"), 64},
	} {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if got := testutil.ToFloat64(e.cache); got != 4096 {
		t.Errorf("cache bytes %v", got)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
