package metrics

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/embeddings"
)

// Metric names of the embeddings endpoint behind tool search (docs/search.md).
const (
	// NameEmbeddingsRequests counts requests to the endpoint by kind (query, tools) and result
	// (ok, failed).
	NameEmbeddingsRequests = "mcp_gateway_search_embeddings_requests_total"
	// NameEmbeddingsFailures counts failed requests by reason (embeddings.Reasons).
	NameEmbeddingsFailures = "mcp_gateway_search_embeddings_failures_total"
	// NameEmbeddingsFallbacks counts searches ranked lexically although embeddings are on, by
	// reason (embeddings.Reasons).
	NameEmbeddingsFallbacks = "mcp_gateway_search_embeddings_fallbacks_total"
	// NameEmbeddingsDuration is the time of requests to the endpoint, by kind.
	NameEmbeddingsDuration = "mcp_gateway_search_embeddings_request_duration_seconds"
	// NameEmbeddingsTexts counts the texts sent, by kind: what the endpoint bills.
	NameEmbeddingsTexts = "mcp_gateway_search_embeddings_texts_total"
	// NameEmbeddingsCacheBytes is the memory of the replica's cache of tool vectors.
	NameEmbeddingsCacheBytes = "mcp_gateway_search_embeddings_cache_bytes"
)

// Embeddings records the embeddings endpoint's use. Every series exists from the start; label
// values are closed sets. It implements embeddings.Observer.
type Embeddings struct {
	requests  *prometheus.CounterVec
	failures  *prometheus.CounterVec
	fallbacks *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	texts     *prometheus.CounterVec
	cache     prometheus.Gauge
}

// embeddingKinds are the kinds of request: one query, or a batch of tool texts.
var embeddingKinds = []string{"query", "tools"}

// NewEmbeddings registers the embeddings endpoint's metrics with reg.
func NewEmbeddings(reg prometheus.Registerer) (*Embeddings, error) {
	e := &Embeddings{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameEmbeddingsRequests,
			Help: "Requests to the embeddings endpoint behind tool search, by kind and result."}, []string{"kind", "result"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameEmbeddingsFailures,
			Help: "Failed requests to the embeddings endpoint, by reason."}, []string{"reason"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameEmbeddingsFallbacks,
			Help: "Tool searches ranked lexically although embeddings are on, by reason."}, []string{"reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: NameEmbeddingsDuration,
			Help:    "Time of requests to the embeddings endpoint, by kind.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"kind"}),
		texts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameEmbeddingsTexts,
			Help: "Texts sent to the embeddings endpoint, by kind."}, []string{"kind"}),
		cache: prometheus.NewGauge(prometheus.GaugeOpts{Name: NameEmbeddingsCacheBytes,
			Help: "Memory of this replica's cache of tool vectors, in bytes."}),
	}
	for _, k := range embeddingKinds {
		e.requests.WithLabelValues(k, "ok")
		e.requests.WithLabelValues(k, "failed")
		e.duration.WithLabelValues(k)
		e.texts.WithLabelValues(k)
	}
	for _, r := range append(embeddings.Reasons(), Other) {
		e.failures.WithLabelValues(r)
		e.fallbacks.WithLabelValues(r)
	}
	for _, c := range []prometheus.Collector{e.requests, e.failures, e.fallbacks, e.duration, e.texts, e.cache} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Request implements embeddings.Observer. A request not sent (backoff, budget) is not counted
// here: it never reached the endpoint.
func (e *Embeddings) Request(kind string, took time.Duration, texts int, reason string) {
	if !slices.Contains(embeddingKinds, kind) {
		kind = Other
	}
	e.duration.WithLabelValues(kind).Observe(took.Seconds())
	e.texts.WithLabelValues(kind).Add(float64(texts))
	if reason == "" {
		e.requests.WithLabelValues(kind, "ok").Inc()
		return
	}
	e.requests.WithLabelValues(kind, "failed").Inc()
	e.failures.WithLabelValues(known(reason)).Inc()
}

// Fallback implements embeddings.Observer.
func (e *Embeddings) Fallback(reason string) { e.fallbacks.WithLabelValues(known(reason)).Inc() }

// CacheBytes implements embeddings.Observer.
func (e *Embeddings) CacheBytes(n int64) { e.cache.Set(float64(n)) }

func known(reason string) string {
	if slices.Contains(embeddings.Reasons(), reason) {
		return reason
	}
	return Other
}
