package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metric names of the asks: the requests the gateway writes to pre-2026 clients (elicitation, sampling, roots).
const (
	NameLegacyAsks        = "mcp_gateway_legacy_asks_total"
	NameLegacyAsksPending = "mcp_gateway_legacy_asks_pending"
)

// Kinds of ask (mcp_gateway_legacy_asks_total, label kind).
const (
	// AskKindElicitation is a backend's elicitation/create.
	AskKindElicitation = "elicitation"
	// AskKindSampling is a backend's sampling/createMessage.
	AskKindSampling = "sampling"
	// AskKindRoots is a backend's roots/list.
	AskKindRoots = "roots"
	// AskKindConfirm is the gateway's own confirmation, asked as elicitation/create.
	AskKindConfirm = "confirm"
)

// How an ask ended (mcp_gateway_legacy_asks_total, label outcome). Every request
// the edge asks ends with exactly one of answered, cross_replica, declined, timeout and
// lost on the replica that sent it; no_capability counts requests never sent. The replica that
// receives an answer nobody waits for any more (the asking replica is gone) counts lost too.
const (
	// AskAnswered is an answer received on the replica that asked.
	AskAnswered = "answered"
	// AskCrossReplica is an answer POSTed to another replica and handed over through Redis.
	AskCrossReplica = "cross_replica"
	// AskDeclined is an elicitation the user declined or cancelled, or a JSON-RPC error as
	// the client's answer.
	AskDeclined = "declined"
	// AskTimeout is a request the client did not answer within legacy.askTimeout.
	AskTimeout = "timeout"
	// AskNoCapability is a request not sent: the client did not declare the capability.
	AskNoCapability = "no_capability"
	// AskLost is a request whose answer will never be used: the client went away, the
	// request could not be written, another request of the same round failed, or the answer
	// reached no replica still waiting for it.
	AskLost = "lost"
)

// LegacyAskMetricNames returns the names of the asks' metrics. Like the other series of
// pre-2026 clients they are not in MetricNames: they appear once a client is first asked, so a
// gateway that never serves a legacy client exports none of them.
func LegacyAskMetricNames() []string { return []string{NameLegacyAsks, NameLegacyAsksPending} }

// AskKinds returns the ask kinds, without Other.
func AskKinds() []string {
	return []string{AskKindElicitation, AskKindSampling, AskKindRoots, AskKindConfirm}
}

// AskOutcomes returns the ask outcomes, without Other.
func AskOutcomes() []string {
	return []string{AskAnswered, AskCrossReplica, AskDeclined, AskTimeout, AskNoCapability, AskLost}
}

// legacyAsks holds the asks' series: a counter over two closed label sets and a gauge.
type legacyAsks struct {
	kinds, outcomes closedSet
	total           *table[prometheus.Counter] // kind × outcome
	// pending is a vector without labels, resolved on first use, so that the gauge is
	// exported only once a client has been asked.
	pending *table[prometheus.Gauge]
}

// newLegacyAsks builds the asks' collectors and appends them to cs for New to register.
func (r *Recorder) newLegacyAsks(cs *[]prometheus.Collector) *legacyAsks {
	l := &legacyAsks{kinds: newClosedSet(AskKinds()), outcomes: newClosedSet(AskOutcomes())}
	l.total = newTable(r.newCounterVec(cs, NameLegacyAsks,
		"Requests the gateway wrote to pre-2026 clients (asks), by kind and outcome.",
		"kind", "outcome").WithLabelValues, l.kinds, l.outcomes)
	pending := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameLegacyAsksPending,
		Help: "Server→client requests sent to pre-2026 clients on this replica and not yet answered."}, nil)
	*cs = append(*cs, pending)
	l.pending = newTable(pending.WithLabelValues)
	return l
}

// LegacyAsk counts one ask; kind is an AskKind constant and outcome an Ask
// outcome constant.
func (r *Recorder) LegacyAsk(kind, outcome string) {
	if r == nil || r.legacy == nil {
		return
	}
	r.legacy.total.at2(r.legacy.kinds.of(kind), r.legacy.outcomes.of(outcome)).Inc()
}

// LegacyAsksPending moves the gauge of requests waiting for a pre-2026 client's answer by delta.
func (r *Recorder) LegacyAsksPending(delta int) {
	if r == nil || r.legacy == nil {
		return
	}
	r.legacy.pending.at(0).Add(float64(delta))
}
