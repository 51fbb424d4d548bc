package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcp-gateway/gateway/internal/intercept"
)

// TestInterceptorMetrics: each invocation is counted by interceptor, phase and result, errors
// by reason, and timed; unknown names and values fold into _other, so the families stay within
// their closed sets; the exposition lints.
func TestInterceptorMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := NewInterceptors(reg, []string{"dlp", "guard"})
	if err != nil {
		t.Fatal(err)
	}
	var _ intercept.Metrics = m
	m.Invocation("dlp", "request", intercept.ResultMutated, "", time.Millisecond)
	m.Invocation("guard", "response", intercept.ResultDenied, "", time.Millisecond)
	m.Invocation("guard", "request", intercept.ResultError, intercept.ReasonTimeout, time.Second)
	for i := range 1000 {
		bogus := strings.Repeat("x", i%7+1)
		m.Invocation(bogus, bogus, bogus, bogus, time.Millisecond)
		m.Invocation("dlp", "request", intercept.ResultError, bogus, time.Millisecond)
	}
	m.CircuitState("guard", CircuitOpen)
	m.CircuitState("unknown", 1)
	want := `
# HELP mcp_gateway_interceptor_errors_total Interceptor invocations that gave no decision, by interceptor and reason.
# TYPE mcp_gateway_interceptor_errors_total counter
mcp_gateway_interceptor_errors_total{interceptor="dlp",reason="_other"} 1000
mcp_gateway_interceptor_errors_total{interceptor="guard",reason="timeout"} 1
# HELP mcp_gateway_interceptor_circuit_state An interceptor's circuit breaker: 0 closed, 1 half-open, 2 open.
# TYPE mcp_gateway_interceptor_circuit_state gauge
mcp_gateway_interceptor_circuit_state{interceptor="dlp"} 0
mcp_gateway_interceptor_circuit_state{interceptor="guard"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), NameInterceptorErrors, NameInterceptorCircuit); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(m.calls.at3(m.names.of("guard"), m.phases.of("response"), m.results.of(intercept.ResultDenied))); got != 1 {
		t.Fatalf("denied = %v", got)
	}
	// dlp mutated, guard denied, guard error, _other×_other×_other, dlp error.
	if n := countSeries(t, reg, NameInterceptorCalls); n != 5 {
		t.Fatalf("%d call series", n)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
	if _, err := NewInterceptors(prometheus.NewRegistry(), []string{"a", "a"}); err == nil {
		t.Fatal("a duplicate name was accepted")
	}
	var none *Interceptors
	none.Invocation("a", "request", "allowed", "", 0)
	none.CircuitState("a", 1)
}
