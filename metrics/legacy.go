package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metric names of the bridge that carries server→client requests to pre-2026 clients.
const (
	NameLegacyBridge  = "mcp_gateway_legacy_bridge_total"
	NameLegacyPending = "mcp_gateway_legacy_pending"
)

// Kinds of bridged request (mcp_gateway_legacy_bridge_total, label kind).
const (
	// BridgeKindElicitation is a backend's elicitation/create.
	BridgeKindElicitation = "elicitation"
	// BridgeKindSampling is a backend's sampling/createMessage.
	BridgeKindSampling = "sampling"
	// BridgeKindRoots is a backend's roots/list.
	BridgeKindRoots = "roots"
	// BridgeKindConfirm is the gateway's own confirmation, asked as elicitation/create.
	BridgeKindConfirm = "confirm"
)

// How a bridged request ended (mcp_gateway_legacy_bridge_total, label outcome). Every request
// the bridge sends ends with exactly one of answered, cross_replica, declined, timeout and
// lost on the replica that sent it; no_capability counts requests never sent. The replica that
// receives an answer nobody waits for any more (the asking replica is gone) counts lost too.
const (
	// BridgeAnswered is an answer received on the replica that asked.
	BridgeAnswered = "answered"
	// BridgeCrossReplica is an answer POSTed to another replica and handed over through Redis.
	BridgeCrossReplica = "cross_replica"
	// BridgeDeclined is an elicitation the user declined or cancelled, or a JSON-RPC error as
	// the client's answer.
	BridgeDeclined = "declined"
	// BridgeTimeout is a request the client did not answer within the bridge timeout.
	BridgeTimeout = "timeout"
	// BridgeNoCapability is a request not sent: the client did not declare the capability.
	BridgeNoCapability = "no_capability"
	// BridgeLost is a request whose answer will never be used: the client went away, the
	// request could not be written, another request of the same round failed, or the answer
	// reached no replica still waiting for it.
	BridgeLost = "lost"
)

// LegacyBridgeMetricNames returns the names of the bridge's metrics. Like the other series of
// pre-2026 clients they are not in MetricNames: they appear once the bridge is first used, so a
// gateway that never serves a legacy client exports none of them.
func LegacyBridgeMetricNames() []string { return []string{NameLegacyBridge, NameLegacyPending} }

// BridgeKinds returns the bridged request kinds, without Other.
func BridgeKinds() []string {
	return []string{BridgeKindElicitation, BridgeKindSampling, BridgeKindRoots, BridgeKindConfirm}
}

// BridgeOutcomes returns the bridged request outcomes, without Other.
func BridgeOutcomes() []string {
	return []string{BridgeAnswered, BridgeCrossReplica, BridgeDeclined, BridgeTimeout, BridgeNoCapability, BridgeLost}
}

// legacyBridge holds the bridge's series: a counter over two closed label sets and a gauge.
type legacyBridge struct {
	kinds, outcomes closedSet
	total           *table[prometheus.Counter] // kind × outcome
	// pending is a vector without labels, resolved on first use, so that the gauge is
	// exported only once the bridge has been used.
	pending *table[prometheus.Gauge]
}

// newLegacyBridge builds the bridge's collectors and appends them to cs for New to register.
func (r *Recorder) newLegacyBridge(cs *[]prometheus.Collector) *legacyBridge {
	l := &legacyBridge{kinds: newClosedSet(BridgeKinds()), outcomes: newClosedSet(BridgeOutcomes())}
	l.total = newTable(r.newCounterVec(cs, NameLegacyBridge,
		"Server→client requests bridged to pre-2026 clients, by kind and outcome.",
		"kind", "outcome").WithLabelValues, l.kinds, l.outcomes)
	pending := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameLegacyPending,
		Help: "Server→client requests sent to pre-2026 clients on this replica and not yet answered."}, nil)
	*cs = append(*cs, pending)
	l.pending = newTable(pending.WithLabelValues)
	return l
}

// LegacyBridge counts one bridged request; kind is a BridgeKind constant and outcome a Bridge
// outcome constant.
func (r *Recorder) LegacyBridge(kind, outcome string) {
	if r == nil || r.legacy == nil {
		return
	}
	r.legacy.total.at2(r.legacy.kinds.of(kind), r.legacy.outcomes.of(outcome)).Inc()
}

// LegacyPending moves the gauge of requests waiting for a pre-2026 client's answer by delta.
func (r *Recorder) LegacyPending(delta int) {
	if r == nil || r.legacy == nil {
		return
	}
	r.legacy.pending.at(0).Add(float64(delta))
}
