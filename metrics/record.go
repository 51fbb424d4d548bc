package metrics

import "time"

// ObserveRequest counts one client request and observes its duration. method
// is the JSON-RPC method as received; outcome one of the internal/outcome values.
// For subscriptions/listen the duration is the lifetime of the stream.
func (r *Recorder) ObserveRequest(method, outcome string, d time.Duration) {
	r.ObserveRequestWaited(method, outcome, d, 0)
}

// ObserveRequestWaited is ObserveRequest for a request that spent waited of its
// duration d waiting for the client to answer: a pre-2026 client asked for
// elicitation (a backend's question, the gateway's confirmation or approval),
// sampling or roots while its call stays open. The request duration observed
// is d - waited, the time the gateway and the backends took, so that latency
// objectives never count a person thinking; a positive waited is observed in
// the client-wait histogram.
func (r *Recorder) ObserveRequestWaited(method, outcome string, d, waited time.Duration) {
	if r == nil {
		return
	}
	m := r.methods.of(method)
	r.requests.at2(m, r.outcomes.of(outcome)).Inc()
	r.requestDuration.at1(m).Observe(seconds(d - max(waited, 0)))
	if waited > 0 {
		r.clientWait.at1(m).Observe(seconds(waited))
	}
}

// ToolCall counts one tools/call by configured upstream, the tool's name at
// that upstream (not the namespaced name) and outcome. Tools not in the
// upstream's allowlist (SetKnownTools) are counted as Other.
func (r *Recorder) ToolCall(upstream, tool, outcome string) {
	if r == nil {
		return
	}
	r.tools.inc(upstream, tool, outcome)
}

// SetKnownTools replaces the allowlist of tool names for a configured
// upstream, typically after each successful tools/list from it. The first
// MaxToolsPerUpstream valid, distinct names are kept; names that are empty,
// longer than MaxLabelValueLength, not UTF-8 or Other are skipped. Series of
// tools that leave the list are deleted, so the series count stays bounded
// however often the list changes. Unknown upstreams are ignored.
func (r *Recorder) SetKnownTools(upstream string, tools []string) {
	if r == nil {
		return
	}
	r.tools.setKnown(upstream, tools)
}

// ObserveUpstream counts one request sent to a backend and observes its
// duration. Retries count as separate requests. outcome is one of the
// internal/outcome values a backend exchange ends in (see upstreams.Options.Observe).
func (r *Recorder) ObserveUpstream(upstream, method, outcome string, d time.Duration) {
	if r == nil {
		return
	}
	u, m := r.upstreams.of(upstream), r.methods.of(method)
	r.upstreamRequests.at3(u, m, r.outcomes.of(outcome)).Inc()
	r.upstreamDuration.at2(u, m).Observe(seconds(d))
}

// AuthFailure counts one failed authentication; reason is one of the Auth
// constants.
func (r *Recorder) AuthFailure(reason string) {
	if r == nil {
		return
	}
	r.authFailures.at1(r.authReasons.of(reason)).Inc()
}

// AuthzDecision counts one authorization decision (DecisionAllow,
// DecisionStepUp, DecisionHidden) on a call to upstream.
func (r *Recorder) AuthzDecision(decision, upstream string) {
	if r == nil {
		return
	}
	r.authzDecisions.at2(r.decisions.of(decision), r.upstreams.of(upstream)).Inc()
}

// MRTREvent counts one MRTR event. reason is used only with EventRejected
// (one of the Reject constants; anything else there counts as Other) and is
// recorded as ReasonNone for every other event.
func (r *Recorder) MRTREvent(event, reason string) {
	if r == nil {
		return
	}
	e := r.events.of(event)
	if r.events.values[e] != EventRejected {
		reason = ReasonNone
	} else if reason == "" || reason == ReasonNone {
		reason = Other
	}
	r.mrtrEvents.at2(e, r.mrtrReasons.of(reason)).Inc()
}

// RateLimit counts one rate-limit decision (RateAllowed, RateLimited, RateError).
func (r *Recorder) RateLimit(decision string) {
	if r == nil {
		return
	}
	r.rateLimits.at1(r.rateDecisions.of(decision)).Inc()
}

// ListCache counts one merged-list cache lookup.
func (r *Recorder) ListCache(hit bool) {
	if r == nil {
		return
	}
	result := r.cacheResults.of(cacheMiss)
	if hit {
		result = r.cacheResults.of(cacheHit)
	}
	r.listCache.at1(result).Inc()
}

// RedisError counts one failed Redis operation; op is one of the RedisOp
// constants.
func (r *Recorder) RedisError(op string) {
	if r == nil {
		return
	}
	r.redisErrors.at1(r.redisOps.of(op)).Inc()
}

// ListenDropped counts n notifications not relayed to one listening client;
// cause is one of the Drop constants.
func (r *Recorder) ListenDropped(cause string, n int) {
	if r == nil || n <= 0 {
		return
	}
	r.listenDropped.at1(r.dropCauses.of(cause)).Add(float64(n))
}

// CallNoteDropped counts one notification of a call's response stream that upstream sent
// past its maxNotificationsPerCall and the gateway did not relay.
func (r *Recorder) CallNoteDropped(upstream string) {
	if r == nil {
		return
	}
	r.callNotesDropped.at1(r.upstreams.of(upstream)).Inc()
}

// InFlight marks a client request as started and returns the function that
// marks it finished; call that exactly once (typically deferred).
func (r *Recorder) InFlight() (done func()) {
	if r == nil {
		return noop
	}
	r.inFlight.Inc()
	return r.inFlightDone
}

// StreamOpened marks an SSE response stream as open and returns the function
// that marks it closed; call that exactly once.
func (r *Recorder) StreamOpened() (closed func()) {
	if r == nil {
		return noop
	}
	r.streams.Inc()
	return r.streamClosed
}

// SetUpstreamUp records the health of a configured upstream. Unknown
// upstreams are ignored: a gauge shared by all of them would mean nothing.
func (r *Recorder) SetUpstreamUp(upstream string, up bool) {
	if r == nil {
		return
	}
	if _, ok := r.upstreams.lookup(upstream); !ok {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	r.upstreamUp.WithLabelValues(upstream).Set(v)
}

// SetCircuitState records the circuit-breaker state of a configured upstream
// (CircuitClosed, CircuitHalfOpen or CircuitOpen). Unknown upstreams and
// states are ignored.
func (r *Recorder) SetCircuitState(upstream string, state int) {
	if r == nil || state < CircuitClosed || state > CircuitOpen {
		return
	}
	if _, ok := r.upstreams.lookup(upstream); !ok {
		return
	}
	r.circuitState.WithLabelValues(upstream).Set(float64(state))
}

func seconds(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return d.Seconds()
}

func noop() {}

// ForgetUpstream removes the health and circuit gauges of an upstream the gateway no longer has
// (a configuration reload removed it), so that no alert keeps firing on its last value.
func (r *Recorder) ForgetUpstream(upstream string) {
	if r == nil {
		return
	}
	r.upstreamUp.DeleteLabelValues(upstream)
	r.circuitState.DeleteLabelValues(upstream)
}
