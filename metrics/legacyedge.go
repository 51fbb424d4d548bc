package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metrics of pre-2026 clients served at the edge (docs/protocol.md §9). They are series of their
// own, so the label sets of mcp_gateway_requests_total, which dashboards and alert rules read,
// do not change.
const (
	NameLegacySessions = "mcp_gateway_legacy_sessions_total"
	NameLegacyRequests = "mcp_gateway_legacy_requests_total"
)

// Values of the event label of NameLegacySessions.
const (
	// LegacySessionInitialized counts session ids minted by initialize.
	LegacySessionInitialized = "initialized"
	// LegacySessionOpened counts session ids opened by a later request.
	LegacySessionOpened = "opened"
	// LegacySessionExpired counts session ids refused because their lifetime had passed.
	LegacySessionExpired = "expired"
	// LegacySessionRejected counts session ids refused for any other reason: tampered,
	// truncated, sealed with a key no longer held, or another caller's.
	LegacySessionRejected = "rejected"
)

// LegacySessionEvents returns the event label values of NameLegacySessions.
func LegacySessionEvents() []string {
	return []string{LegacySessionInitialized, LegacySessionOpened, LegacySessionExpired, LegacySessionRejected}
}

// LegacyMethods returns the method label values of NameLegacyRequests: the methods a pre-2026
// client sends, those the edge answers itself included.
func LegacyMethods() []string {
	return append([]string{"initialize", "ping"}, Methods()...)
}

// LegacyMetricNames returns the names of the metrics of pre-2026 clients.
func LegacyMetricNames() []string {
	return append([]string{NameLegacySessions, NameLegacyRequests}, LegacyAskMetricNames()...)
}

type legacyMetrics struct {
	events, methods closedSet
	sessions        *table[prometheus.Counter] // event
	requests        *table[prometheus.Counter] // method × outcome
}

func (r *Recorder) buildLegacyEdge(cs *[]prometheus.Collector) {
	l := &legacyMetrics{events: newClosedSet(LegacySessionEvents()), methods: newClosedSet(LegacyMethods())}
	l.sessions = newTable(r.newCounterVec(cs, NameLegacySessions,
		"Sessions of pre-2026 clients by event: initialized, opened, expired or rejected (404).",
		"event").WithLabelValues, l.events)
	l.requests = newTable(r.newCounterVec(cs, NameLegacyRequests,
		"Requests of pre-2026 clients by MCP method and outcome; each is also counted in "+NameRequests+".",
		"method", "outcome").WithLabelValues, l.methods, r.outcomes)
	r.edge = l
}

// LegacySession counts one session event (one of LegacySessionEvents).
func (r *Recorder) LegacySession(event string) {
	if r == nil {
		return
	}
	r.edge.sessions.at1(r.edge.events.of(event)).Inc()
}

// LegacyRequest counts one request of a pre-2026 client by method and outcome.
func (r *Recorder) LegacyRequest(method, outcome string) {
	if r == nil {
		return
	}
	l := r.edge
	l.requests.at2(l.methods.of(method), r.outcomes.of(outcome)).Inc()
}
