package metrics

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names. Dashboards, alert rules and other packages depend on them.
const (
	NameRequests           = "mcp_gateway_requests_total"
	NameRequestDuration    = "mcp_gateway_request_duration_seconds"
	NameClientWait         = "mcp_gateway_request_client_wait_seconds"
	NameToolCalls          = "mcp_gateway_tool_calls_total"
	NameUpstreamRequests   = "mcp_gateway_upstream_requests_total"
	NameUpstreamDuration   = "mcp_gateway_upstream_request_duration_seconds"
	NameAuthFailures       = "mcp_gateway_auth_failures_total"
	NameAuthzDecisions     = "mcp_gateway_authz_decisions_total"
	NameMRTREvents         = "mcp_gateway_mrtr_events_total"
	NameRateLimitDecisions = "mcp_gateway_rate_limit_decisions_total"
	NameRequestsInFlight   = "mcp_gateway_requests_in_flight"
	NameSSEStreamsOpen     = "mcp_gateway_sse_streams_open"
	NameUpstreamUp         = "mcp_gateway_upstream_up"
	NameUpstreamCircuit    = "mcp_gateway_upstream_circuit_state"
	NameListCacheRequests  = "mcp_gateway_list_cache_requests_total"
	NameRedisErrors        = "mcp_gateway_redis_errors_total"
	NameListenDropped      = "mcp_gateway_listen_notifications_dropped_total"
	NameCallNotesDropped   = "mcp_gateway_upstream_notifications_dropped_total"
	NameBuildInfo          = "mcp_gateway_build_info"
)

const (
	cacheHit, cacheMiss      = "hit", "miss"
	labelUpstream, labelTool = "upstream", "tool"
)

// MetricNames returns the name of every metric a Recorder registers (without
// the _bucket/_sum/_count series suffixes of histograms).
func MetricNames() []string {
	return []string{
		NameRequests, NameRequestDuration, NameClientWait, NameToolCalls, NameUpstreamRequests,
		NameUpstreamDuration, NameAuthFailures, NameAuthzDecisions, NameMRTREvents,
		NameRateLimitDecisions, NameRequestsInFlight, NameSSEStreamsOpen, NameUpstreamUp,
		NameUpstreamCircuit, NameListCacheRequests, NameRedisErrors, NameBuildInfo,
		NameListenDropped, NamePinDrift, NamePinRestoreWaits, NameCallNotesDropped, NameClientRefusals, NameCacheEvictions,
		NameUpstreamRateLimitWaits,
	}
}

// DurationBuckets returns the histogram buckets, in seconds: 0.5 ms for a
// cached list up to 60 s for a slow tool call.
func DurationBuckets() []float64 {
	return []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
		0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
}

// ClientWaitBuckets returns the buckets of the client-wait histogram, in
// seconds: from a client that answers at once to a person who takes the
// whole default legacy.askTimeout (10 minutes).
func ClientWaitBuckets() []float64 {
	return []float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
}

// ErrRegister reports a metric the registry refused (usually registered twice).
var ErrRegister = errors.New("metrics: register")

// Recorder records the gateway's metrics with closed label sets. All methods
// are safe for concurrent use, and safe on a nil *Recorder, where they do
// nothing.
type Recorder struct {
	methods, outcomes, upstreams, authReasons, decisions closedSet
	events, mrtrReasons, rateDecisions, cacheResults     closedSet
	redisOps, dropCauses                                 closedSet
	// legacy counts the asks written to pre-2026 clients (legacy.go).
	legacy *legacyAsks

	requests         *table[prometheus.Counter]  // method × outcome
	requestDuration  *table[prometheus.Observer] // method
	clientWait       *table[prometheus.Observer] // method
	upstreamRequests *table[prometheus.Counter]  // upstream × method × outcome
	upstreamDuration *table[prometheus.Observer] // upstream × method
	authFailures     *table[prometheus.Counter]  // reason
	authzDecisions   *table[prometheus.Counter]  // decision × upstream
	mrtrEvents       *table[prometheus.Counter]  // event × reason
	rateLimits       *table[prometheus.Counter]  // decision
	listCache        *table[prometheus.Counter]  // result
	redisErrors      *table[prometheus.Counter]  // op
	listenDropped    *table[prometheus.Counter]  // cause
	callNotesDropped *table[prometheus.Counter]  // upstream

	inFlight, streams prometheus.Gauge
	// Prepared once so that InFlight and StreamOpened return them without
	// allocating a closure per request.
	inFlightDone, streamClosed func()
	// edge counts what pre-2026 clients do at the edge (legacyedge.go).
	edge *legacyMetrics

	upstreamUp, circuitState *prometheus.GaugeVec
	tools                    *toolCalls
	pins                     pinDrift // pins.go
	// clientRefusals counts per-client refusals before authentication (clients.go).
	clientReasons  closedSet
	clientRefusals *table[prometheus.Counter] // reason
	// evictions counts the per-replica caches' evictions (evictions.go).
	evictions cacheEvictions
	// rateLimitWaits is NameUpstreamRateLimitWaits by upstream.
	rateLimitWaits *table[prometheus.Counter]
}

// New registers every gateway metric on reg and returns the recorder. It does
// not register the Go runtime and process collectors; see RegisterRuntime.
func New(reg prometheus.Registerer, opts Options) (*Recorder, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	r := &Recorder{
		methods:       newClosedSet(Methods()),
		outcomes:      newClosedSet(Outcomes()),
		upstreams:     newClosedSet(opts.Upstreams),
		authReasons:   newClosedSet(AuthReasons()),
		decisions:     newClosedSet(Decisions()),
		events:        newClosedSet(Events()),
		mrtrReasons:   newClosedSet(append([]string{ReasonNone}, RejectReasons()...)),
		rateDecisions: newClosedSet(RateDecisions()),
		cacheResults:  newClosedSet([]string{cacheHit, cacheMiss}),
		redisOps:      newClosedSet(RedisOps()),
		dropCauses:    newClosedSet(DropCauses()),
	}
	var cs []prometheus.Collector
	r.buildLegacyEdge(&cs)
	r.buildTraffic(&cs)
	r.buildEvents(&cs)
	r.buildGauges(&cs, opts.version())
	r.buildPins(&cs)
	r.buildClients(&cs)
	r.buildEvictions(&cs)
	buildRateLimitWaits(r, &cs)
	r.startAtZero()
	r.tools = newToolCalls(r.newCounterVec(&cs, NameToolCalls,
		"Tool calls by upstream, upstream tool name (allowlisted) and outcome.",
		labelUpstream, labelTool, "outcome"), opts.Upstreams, r.outcomes, opts.maxTools())
	r.legacy = r.newLegacyAsks(&cs)
	if err := registerAll(reg, cs); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Recorder) buildTraffic(cs *[]prometheus.Collector) {
	r.requests = newTable(r.newCounterVec(cs, NameRequests,
		"Client requests by MCP method and outcome.", "method", "outcome").WithLabelValues,
		r.methods, r.outcomes)
	r.requestDuration = newTable(r.newHistogramVec(cs, NameRequestDuration,
		"Client request duration by MCP method, until the response (or stream) ends, less the time spent waiting for the client's answers.",
		DurationBuckets(), "method").WithLabelValues, r.methods)
	r.clientWait = newTable(r.newHistogramVec(cs, NameClientWait,
		"Time client requests spent waiting for the client's answers (a person answering elicitation or a confirmation, sampling, roots), by MCP method.",
		ClientWaitBuckets(), "method").WithLabelValues, r.methods)
	r.upstreamRequests = newTable(r.newCounterVec(cs, NameUpstreamRequests,
		"Requests sent to backends by upstream, MCP method and outcome.",
		labelUpstream, "method", "outcome").WithLabelValues, r.upstreams, r.methods, r.outcomes)
	r.upstreamDuration = newTable(r.newHistogramVec(cs, NameUpstreamDuration,
		"Backend request duration by upstream and MCP method.",
		DurationBuckets(), labelUpstream, "method").WithLabelValues, r.upstreams, r.methods)
}

func (r *Recorder) buildEvents(cs *[]prometheus.Collector) {
	r.authFailures = newTable(r.newCounterVec(cs, NameAuthFailures,
		"Failed authentications by reason.", "reason").WithLabelValues, r.authReasons)
	r.authzDecisions = newTable(r.newCounterVec(cs, NameAuthzDecisions,
		"Authorization decisions on tool calls by decision and upstream.",
		"decision", labelUpstream).WithLabelValues, r.decisions, r.upstreams)
	r.mrtrEvents = newTable(r.newCounterVec(cs, NameMRTREvents,
		"MRTR events; reason says why a requestState was rejected, and is none for every other event.",
		"event", "reason").WithLabelValues, r.events, r.mrtrReasons)
	r.rateLimits = newTable(r.newCounterVec(cs, NameRateLimitDecisions,
		"Rate-limit decisions.", "decision").WithLabelValues, r.rateDecisions)
	r.listCache = newTable(r.newCounterVec(cs, NameListCacheRequests,
		"Merged list cache lookups by result.", "result").WithLabelValues, r.cacheResults)
	r.redisErrors = newTable(r.newCounterVec(cs, NameRedisErrors,
		"Failed Redis operations by operation.", "op").WithLabelValues, r.redisOps)
	r.listenDropped = newTable(r.newCounterVec(cs, NameListenDropped,
		"Notifications a backend sent on a listen stream that a listening client was not sent, by cause.",
		"cause").WithLabelValues, r.dropCauses)
	r.callNotesDropped = newTable(r.newCounterVec(cs, NameCallNotesDropped,
		"Notifications of a call's response stream not relayed to the client, the call having relayed its upstream's maxNotificationsPerCall, by upstream.",
		labelUpstream).WithLabelValues, r.upstreams)
}

// startAtZero creates the series of the event counters over small closed sets at 0, so that
// the first event is an increase from 0 that rate() and increase() see. A series that appeared
// with its first event at 1 would be invisible to them until the second, and a one-off burst
// would never fire an alert. Other is left out: it only counts inputs outside the sets.
func (r *Recorder) startAtZero() {
	for _, t := range []*table[prometheus.Counter]{r.authFailures, r.rateLimits, r.listCache, r.redisErrors, r.listenDropped,
		r.callNotesDropped, r.pins.waits, r.rateLimitWaits} {
		for i := range t.sets[0].size() - 1 {
			t.at1(i)
		}
	}
	reject := r.events.of(EventRejected)
	for e := range r.events.size() - 1 {
		if e != reject {
			r.mrtrEvents.at2(e, r.mrtrReasons.of(ReasonNone))
			continue
		}
		for _, reason := range RejectReasons() {
			r.mrtrEvents.at2(e, r.mrtrReasons.of(reason))
		}
	}
}

func (r *Recorder) buildGauges(cs *[]prometheus.Collector, version string) {
	r.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{Name: NameRequestsInFlight,
		Help: "Client requests being served."})
	r.streams = prometheus.NewGauge(prometheus.GaugeOpts{Name: NameSSEStreamsOpen,
		Help: "SSE response streams open toward clients, subscriptions/listen included."})
	r.inFlightDone, r.streamClosed = r.inFlight.Dec, r.streams.Dec
	r.upstreamUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameUpstreamUp,
		Help: "Whether the last health check of the upstream succeeded (1) or not (0)."},
		[]string{labelUpstream})
	r.circuitState = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameUpstreamCircuit,
		Help: "Circuit breaker state of the upstream: 0 closed, 1 half-open, 2 open."},
		[]string{labelUpstream})
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameBuildInfo,
		Help: "Build information; the value is always 1."}, []string{"version", "goversion"})
	build.WithLabelValues(version, runtime.Version()).Set(1)
	*cs = append(*cs, r.inFlight, r.streams, r.upstreamUp, r.circuitState, build)
}

func (r *Recorder) newCounterVec(cs *[]prometheus.Collector, name, help string, labels ...string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	*cs = append(*cs, v)
	return v
}

func (r *Recorder) newHistogramVec(cs *[]prometheus.Collector, name, help string, buckets []float64, labels ...string) prometheus.ObserverVec {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help,
		Buckets: buckets}, labels)
	*cs = append(*cs, v)
	return v
}

// registerAll registers cs on reg, undoing the registrations already made if
// one fails, so that a failed New leaves the registry as it found it.
func registerAll(reg prometheus.Registerer, cs []prometheus.Collector) error {
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return fmt.Errorf("%w: %w", ErrRegister, err)
		}
	}
	return nil
}
