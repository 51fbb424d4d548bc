package metrics

import "github.com/prometheus/client_golang/prometheus"

// NameUpstreamRateLimitWaits counts the waits a backend's HTTP 429 started on this replica: for
// the wait it named (Retry-After) the backend's requests are not sent (per backend, or per
// caller of a backend that answers as each caller). Its only label is the configured upstream.
const NameUpstreamRateLimitWaits = "mcp_gateway_upstream_rate_limit_waits_total"

// buildRateLimitWaits registers NameUpstreamRateLimitWaits in cs. A function, not a method:
// Recorder's method set is at its bound.
func buildRateLimitWaits(r *Recorder, cs *[]prometheus.Collector) {
	r.rateLimitWaits = newTable(r.newCounterVec(cs, NameUpstreamRateLimitWaits,
		"Waits a backend's HTTP 429 started on this replica (its Retry-After, per backend or per caller of a backend that answers as each caller), during which its requests are not sent.",
		labelUpstream).WithLabelValues, r.upstreams)
}

// UpstreamRateLimitWait counts one wait begun on r for upstream, a configured upstream (an
// unknown one counts nothing: the label values are a closed set). A function, not a method:
// Recorder's method set is at its bound.
func UpstreamRateLimitWait(r *Recorder, upstream string) {
	if r == nil {
		return
	}
	if i, ok := r.upstreams.lookup(upstream); ok {
		r.rateLimitWaits.at1(i).Inc()
	}
}
