package gateway

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// nameCallerCircuit counts what the per-caller circuits of the backends' and interceptors'
// breakers do (backend.BreakerConfig.MinCallers): a caller's own circuit opened, a request it
// refused unsent, a caller's record forgotten to keep the replica's bound. It has no caller
// label, nor a backend one: the values are bounded whatever callers and configurations come.
const nameCallerCircuit = "mcp_gateway_caller_circuit_events_total"

// Values of the breaker label of nameCallerCircuit.
const (
	breakerUpstream    = "upstream"
	breakerInterceptor = "interceptor"
)

// callerCircuitMetrics is nameCallerCircuit, registered once per process: every component set
// a reload builds counts into it.
type callerCircuitMetrics struct{ events *prometheus.CounterVec }

// newCallerCircuitMetrics registers the counter on reg with every series at zero, so an alert
// on its rate has a series from the start.
func newCallerCircuitMetrics(reg prometheus.Registerer) (*callerCircuitMetrics, error) {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: nameCallerCircuit,
		Help: "Per-caller circuit events of backends' and interceptors' breakers: a caller's own circuit opened, a request it refused unsent, a caller's record evicted."},
		[]string{"breaker", "event"})
	for _, b := range []string{breakerUpstream, breakerInterceptor} {
		for _, e := range []string{backend.CallerOpened, backend.CallerRefused, backend.CallerEvicted} {
			v.WithLabelValues(b, e)
		}
	}
	if err := reg.Register(v); err != nil {
		return nil, err
	}
	return &callerCircuitMetrics{events: v}, nil
}

// hook is the breakers' CallerCircuit hook for breakers of one kind; it runs under a breaker's
// lock, and a counter's increment does not block.
func (m *callerCircuitMetrics) hook(breaker string) func(name, event string) {
	if m == nil {
		return nil
	}
	opened := m.events.WithLabelValues(breaker, backend.CallerOpened)
	refused := m.events.WithLabelValues(breaker, backend.CallerRefused)
	evicted := m.events.WithLabelValues(breaker, backend.CallerEvicted)
	return func(_, event string) {
		switch event {
		case backend.CallerOpened:
			opened.Inc()
		case backend.CallerRefused:
			refused.Inc()
		case backend.CallerEvicted:
			evicted.Inc()
		}
	}
}
