package intercept

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// record is one Metrics.Invocation.
type record struct {
	interceptor, phase, result, reason string
}

// recMetrics keeps what the Set reports.
type recMetrics struct {
	mu       sync.Mutex
	calls    []record
	circuits map[string][]int
}

func (m *recMetrics) Invocation(interceptor, phase, result, reason string, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, record{interceptor, phase, result, reason})
}

func (m *recMetrics) CircuitState(interceptor string, state int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.circuits == nil {
		m.circuits = map[string][]int{}
	}
	m.circuits[interceptor] = append(m.circuits[interceptor], state)
}

func (m *recMetrics) all() []record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]record(nil), m.calls...)
}

func (m *recMetrics) last() record {
	all := m.all()
	if len(all) == 0 {
		return record{}
	}
	return all[len(all)-1]
}

// fixture is a Set under test with its metrics and log.
type fixture struct {
	set     *Set
	metrics *recMetrics
	logs    *mcptest.LogBuffer
}

// newFixture compiles cfgs (validated first) into a Set with a JSON log and recording metrics.
func newFixture(t *testing.T, now func() time.Time, cfgs ...Config) *fixture {
	t.Helper()
	return newFixtureWith(t, Deps{Now: now}, cfgs...)
}

// newFixtureWith is newFixture with deps (its log and metrics replaced by the fixture's).
func newFixtureWith(t *testing.T, deps Deps, cfgs ...Config) *fixture {
	t.Helper()
	if err := Validate(cfgs); err != nil {
		t.Fatal(err)
	}
	f := &fixture{metrics: &recMetrics{}, logs: &mcptest.LogBuffer{}}
	deps.Log, deps.Metrics = slog.New(slog.NewJSONHandler(f.logs, nil)), f.metrics
	set, err := New(cfgs, deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(set.Close)
	f.set = set
	return f
}

// toolRule selects every tool of every backend, in both phases.
var toolRule = []RuleConfig{{Tools: []string{"*"}}}

// validator is the configuration of a validation interceptor named name at url.
func validator(name, url string) Config {
	return Config{Name: name, URL: url, Type: TypeValidation, Rules: toolRule}
}

// mutator is the configuration of a mutation interceptor named name at url.
func mutator(name, url string) Config {
	return Config{Name: name, URL: url, Type: TypeMutation, Rules: toolRule}
}

// toolCall is a call of alpha's tool echo with arguments args, in phase.
func toolCall(t *testing.T, args string) *Call {
	t.Helper()
	p, err := RequestPayload("tools/call", []byte(`{"name":"alpha__echo","arguments":`+args+`,"_meta":{"progressToken":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	return &Call{Method: "tools/call", Payload: p, RequestID: "r1", Upstream: "alpha", Name: "alpha__echo"}
}

// run plans and runs c in phase against f's set.
func (f *fixture) run(t *testing.T, phase Phase, c *Call) Verdict {
	t.Helper()
	p := f.set.Plan(phase, "tools/call", "alpha", "echo")
	if p == nil {
		t.Fatal("no interceptor selected")
	}
	return f.set.Run(context.Background(), p, c)
}

// upper is a mutator's function that upper-cases the text argument of a request, or the text of
// a result.
func upper(phase string, payload json.RawMessage) json.RawMessage {
	return json.RawMessage(strings.ReplaceAll(string(payload), "hello", "HELLO"))
}

// host starts an Interceptor Server hosting one interceptor.
func host(t *testing.T, name, typ string, h intercepttest.Handler, opts ...intercepttest.Option) *intercepttest.Server {
	t.Helper()
	return intercepttest.Start(t, []intercepttest.Interceptor{{Name: name, Type: typ, Handle: h}}, opts...)
}
