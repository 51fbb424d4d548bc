package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/intercept"
)

// Metric names of the interceptors (docs/interceptors.md).
const (
	// NameInterceptorCalls counts invocations by interceptor, phase and result (allowed,
	// denied, mutated, error).
	NameInterceptorCalls = "mcp_gateway_interceptor_calls_total"
	// NameInterceptorErrors counts the invocations that gave no decision, by reason.
	NameInterceptorErrors = "mcp_gateway_interceptor_errors_total"
	// NameInterceptorDuration is the time of one invocation, the wait for a slot included.
	NameInterceptorDuration = "mcp_gateway_interceptor_duration_seconds"
	// NameInterceptorCircuit is an interceptor's circuit state, on the scale of
	// NameUpstreamCircuit (CircuitClosed, CircuitHalfOpen, CircuitOpen).
	NameInterceptorCircuit = "mcp_gateway_interceptor_circuit_state"
	labelInterceptor       = "interceptor"
	labelPhase             = "phase"
)

// InterceptorResults are the values of the result label of NameInterceptorCalls.
func InterceptorResults() []string {
	return []string{intercept.ResultAllowed, intercept.ResultDenied, intercept.ResultMutated, intercept.ResultError}
}

// InterceptorPhases are the values of the phase label.
func InterceptorPhases() []string {
	return []string{intercept.PhaseNameRequest, intercept.PhaseNameResponse}
}

// Interceptors records what the configured interceptors do. Every label is a closed set: the
// interceptor label takes the configured names (anything else is Other). It implements
// intercept.Metrics; a nil *Interceptors records nothing.
type Interceptors struct {
	names, phases, results, reasons closedSet
	calls                           *table[prometheus.Counter]  // interceptor × phase × result
	errors                          *table[prometheus.Counter]  // interceptor × reason
	duration                        *table[prometheus.Observer] // interceptor × phase
	circuit                         *prometheus.GaugeVec
}

// NewInterceptors registers the interceptor metrics on reg for the interceptors named.
func NewInterceptors(reg prometheus.Registerer, names []string) (*Interceptors, error) {
	seen := map[string]bool{}
	for _, n := range names {
		if !validLabelValue(n) || n == Other || seen[n] {
			return nil, fmt.Errorf("%w: interceptor %q", ErrInvalidUpstream, n)
		}
		seen[n] = true
	}
	m := &Interceptors{names: newClosedSet(names), phases: newClosedSet(InterceptorPhases()),
		results: newClosedSet(InterceptorResults()), reasons: newClosedSet(intercept.Reasons())}
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameInterceptorCalls,
		Help: "Interceptor invocations, by interceptor, phase and result (allowed, denied, mutated, error)."},
		[]string{labelInterceptor, labelPhase, "result"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameInterceptorErrors,
		Help: "Interceptor invocations that gave no decision, by interceptor and reason."},
		[]string{labelInterceptor, "reason"})
	dur := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: NameInterceptorDuration,
		Help:    "Time of one interceptor invocation, the wait for a free slot included, by interceptor and phase.",
		Buckets: DurationBuckets()}, []string{labelInterceptor, labelPhase})
	m.circuit = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: NameInterceptorCircuit,
		Help: "An interceptor's circuit breaker: 0 closed, 1 half-open, 2 open."}, []string{labelInterceptor})
	m.calls = newTable(calls.WithLabelValues, m.names, m.phases, m.results)
	m.errors = newTable(errs.WithLabelValues, m.names, m.reasons)
	m.duration = newTable(func(lvs ...string) prometheus.Observer { return dur.WithLabelValues(lvs...) }, m.names, m.phases)
	for _, n := range names {
		m.circuit.WithLabelValues(n)
	}
	if err := registerAll(reg, []prometheus.Collector{calls, errs, dur, m.circuit}); err != nil {
		return nil, err
	}
	return m, nil
}

// Invocation counts one invocation.
func (m *Interceptors) Invocation(interceptor, phase, result, reason string, d time.Duration) {
	if m == nil {
		return
	}
	n, p := m.names.of(interceptor), m.phases.of(phase)
	m.calls.at3(n, p, m.results.of(result)).Inc()
	if result == intercept.ResultError {
		m.errors.at2(n, m.reasons.of(reason)).Inc()
	}
	m.duration.at2(n, p).Observe(d.Seconds())
}

// CircuitState sets an interceptor's circuit state gauge to state, one of CircuitClosed,
// CircuitHalfOpen and CircuitOpen (the caller maps its breaker's states onto them). An interceptor not among the names
// the recorder was built with (added by a reload) is not shown.
func (m *Interceptors) CircuitState(interceptor string, state int) {
	if m == nil {
		return
	}
	if _, ok := m.names.lookup(interceptor); ok {
		m.circuit.WithLabelValues(interceptor).Set(float64(state))
	}
}
