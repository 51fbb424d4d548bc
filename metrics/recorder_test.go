package metrics

import (
	"maps"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcp-gateway/gateway/internal/outcome"
)

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []error
	}{
		{"zero", Options{}, nil},
		{"full", Options{Upstreams: []string{"github", "slack"}, MaxToolsPerUpstream: 50, Version: "v1.0.0"}, nil},
		{"empty upstream", Options{Upstreams: []string{""}}, []error{ErrInvalidUpstream}},
		{"reserved upstream", Options{Upstreams: []string{Other}}, []error{ErrInvalidUpstream}},
		{"bad utf8 upstream", Options{Upstreams: []string{"a\xff"}}, []error{ErrInvalidUpstream}},
		{"control upstream", Options{Upstreams: []string{"a\nb"}}, []error{ErrInvalidUpstream}},
		{"long upstream", Options{Upstreams: []string{strings.Repeat("a", MaxLabelValueLength+1)}}, []error{ErrInvalidUpstream}},
		{"duplicate upstream", Options{Upstreams: []string{"a", "b", "a"}}, []error{ErrDuplicateUpstream}},
		{"negative cap", Options{MaxToolsPerUpstream: -1}, []error{ErrInvalidMaxTools}},
		{"huge cap", Options{MaxToolsPerUpstream: MaxToolsPerUpstreamLimit + 1}, []error{ErrInvalidMaxTools}},
		{"bad version", Options{Version: "\xff"}, []error{ErrInvalidVersion}},
		{"every problem at once",
			Options{Upstreams: []string{"", "x", "x"}, MaxToolsPerUpstream: -5, Version: "\x00"},
			[]error{ErrInvalidUpstream, ErrDuplicateUpstream, ErrInvalidMaxTools, ErrInvalidVersion}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrs(t, tt.opts.Validate(), tt.want...)
		})
	}
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := New(reg, Options{Upstreams: []string{""}})
	wantErrs(t, err, ErrInvalidUpstream)
	if n, _ := testutil.GatherAndCount(reg); n != 0 {
		t.Errorf("registry holds %d series after a failed New, want 0", n)
	}
}

func TestNewTwiceOnOneRegistry(t *testing.T) {
	_, reg := newTestRecorder(t, Options{Version: "v1"})
	before, err := testutil.GatherAndCount(reg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(reg, Options{Version: "v1"})
	wantErrs(t, err, ErrRegister)
	if after, _ := testutil.GatherAndCount(reg); after != before {
		t.Errorf("failed New changed the registry: %d series, want %d", after, before)
	}
}

// TestRecorderMovesTheRightSeries drives each method on a fresh recorder and
// checks the exact set of series it leaves in its family.
func TestRecorderMovesTheRightSeries(t *testing.T) {
	opts := Options{Upstreams: []string{"github", "slack"}, Version: "v1.2.3"}
	tests := []struct {
		name   string
		act    func(r *Recorder)
		metric string
		want   map[string]float64
	}{
		{"request", func(r *Recorder) { r.ObserveRequest("tools/call", outcome.OK, 2*time.Millisecond) },
			NameRequests, map[string]float64{`{method="tools/call",outcome="ok"}`: 1}},
		{"request duration", func(r *Recorder) {
			r.ObserveRequest("tools/list", outcome.OK, time.Millisecond)
			r.ObserveRequest("tools/list", outcome.GatewayError, -time.Second)
		}, NameRequestDuration, map[string]float64{`{method="tools/list"}`: 2}},
		{"client wait", func(r *Recorder) {
			r.ObserveRequestWaited("tools/call", outcome.OK, time.Minute, 50*time.Second)
			r.ObserveRequest("tools/call", outcome.OK, time.Second)
			r.ObserveRequestWaited("tools/list", outcome.OK, time.Second, -time.Second)
		}, NameClientWait, map[string]float64{`{method="tools/call"}`: 1}},
		{"request folds unknown method and outcome", func(r *Recorder) { r.ObserveRequest("initialize", "weird", 0) },
			NameRequests, map[string]float64{`{method="_other",outcome="_other"}`: 1}},
		{"upstream", func(r *Recorder) {
			r.ObserveUpstream("github", "tools/list", outcome.Timeout, time.Second)
			r.ObserveUpstream("nope", "ping", "x", time.Second)
		}, NameUpstreamRequests, map[string]float64{
			`{method="tools/list",outcome="timeout",upstream="github"}`: 1,
			`{method="_other",outcome="_other",upstream="_other"}`:      1}},
		{"upstream duration", func(r *Recorder) { r.ObserveUpstream("slack", "resources/read", outcome.OK, time.Second) },
			NameUpstreamDuration, map[string]float64{`{method="resources/read",upstream="slack"}`: 1}},
		{"tool call", func(r *Recorder) {
			r.SetKnownTools("github", []string{"create_issue"})
			r.ToolCall("github", "create_issue", outcome.OK)
			r.ToolCall("github", "delete_repo", outcome.BackendError)
			r.ToolCall("gitlab", "create_issue", outcome.Denied)
		}, NameToolCalls, map[string]float64{
			`{outcome="ok",tool="create_issue",upstream="github"}`:      1,
			`{outcome="backend_error",tool="_other",upstream="github"}`: 1,
			`{outcome="denied",tool="_other",upstream="_other"}`:        1}},
		{"auth failure", func(r *Recorder) {
			r.AuthFailure(AuthExpired)
			r.AuthFailure(AuthExpired)
			r.AuthFailure("eyJhbGciOi")
		}, NameAuthFailures, map[string]float64{`{reason="expired"}`: 2, `{reason="_other"}`: 1}},
		{"authz decision", func(r *Recorder) {
			r.AuthzDecision(DecisionStepUp, "github")
			r.AuthzDecision("maybe", "nope")
		}, NameAuthzDecisions, map[string]float64{
			`{decision="step_up",upstream="github"}`: 1, `{decision="_other",upstream="_other"}`: 1}},
		{"mrtr", func(r *Recorder) {
			r.MRTREvent(EventConfirmIssued, RejectTampered)
			r.MRTREvent(EventRejected, RejectTampered)
			r.MRTREvent(EventRejected, "")
			r.MRTREvent(EventRejected, "bogus")
			r.MRTREvent("bogus", "")
		}, NameMRTREvents, map[string]float64{
			`{event="confirm_issued",reason="none"}`: 1, `{event="rejected",reason="tampered"}`: 1,
			`{event="rejected",reason="_other"}`: 2, `{event="_other",reason="none"}`: 1}},
		{"rate limit", func(r *Recorder) { r.RateLimit(RateLimited); r.RateLimit("nah") },
			NameRateLimitDecisions, map[string]float64{`{decision="limited"}`: 1, `{decision="_other"}`: 1}},
		{"list cache", func(r *Recorder) { r.ListCache(true); r.ListCache(true); r.ListCache(false) },
			NameListCacheRequests, map[string]float64{`{result="hit"}`: 2, `{result="miss"}`: 1}},
		{"redis", func(r *Recorder) { r.RedisError(RedisOpNonce); r.RedisError("FLUSHALL") },
			NameRedisErrors, map[string]float64{`{op="nonce"}`: 1, `{op="_other"}`: 1}},
		{"upstream up", func(r *Recorder) {
			r.SetUpstreamUp("github", true)
			r.SetUpstreamUp("slack", true)
			r.SetUpstreamUp("slack", false)
			r.SetUpstreamUp("nope", true)
		}, NameUpstreamUp, map[string]float64{`{upstream="github"}`: 1, `{upstream="slack"}`: 0}},
		{"circuit state", func(r *Recorder) {
			r.SetCircuitState("github", CircuitOpen)
			r.SetCircuitState("github", 7)
			r.SetCircuitState("slack", CircuitHalfOpen)
			r.SetCircuitState("nope", CircuitOpen)
		}, NameUpstreamCircuit, map[string]float64{`{upstream="github"}`: 2, `{upstream="slack"}`: 1}},
		{"build info", func(*Recorder) {}, NameBuildInfo,
			map[string]float64{`{goversion="` + runtime.Version() + `",version="v1.2.3"}`: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, reg := newTestRecorder(t, opts)
			tt.act(r)
			want := startedAtZero(tt.metric)
			maps.Copy(want, tt.want)
			assertSeries(t, reg, tt.metric, want)
		})
	}
}

// startedAtZero returns the series a new recorder exports at 0 in family name: every value of
// the small closed sets of the event counters, Other aside.
func startedAtZero(name string) map[string]float64 {
	one := func(label string, values []string) map[string]float64 {
		out := map[string]float64{}
		for _, v := range values {
			out[`{`+label+`="`+v+`"}`] = 0
		}
		return out
	}
	switch name {
	case NameAuthFailures:
		return one("reason", AuthReasons())
	case NameRateLimitDecisions:
		return one("decision", RateDecisions())
	case NameListCacheRequests:
		return one("result", []string{cacheHit, cacheMiss})
	case NameRedisErrors:
		return one("op", RedisOps())
	case NameListenDropped:
		return one("cause", DropCauses())
	case NamePinRestoreWaits, NameUpstreamRateLimitWaits:
		return one(labelUpstream, []string{"a"})
	case NameMRTREvents:
		out := map[string]float64{}
		for _, e := range Events() {
			if e != EventRejected {
				out[`{event="`+e+`",reason="none"}`] = 0
			}
		}
		for _, reason := range RejectReasons() {
			out[`{event="rejected",reason="`+reason+`"}`] = 0
		}
		return out
	}
	return map[string]float64{}
}

// TestEventCountersStartAtZero: a new recorder exports every value of its small event counters
// at 0, so the first event is an increase rate() sees, and nothing of Other.
func TestEventCountersStartAtZero(t *testing.T) {
	_, reg := newTestRecorder(t, Options{Upstreams: []string{"a"}})
	for _, name := range []string{NameAuthFailures, NameRateLimitDecisions, NameListCacheRequests,
		NameRedisErrors, NameListenDropped, NameMRTREvents, NamePinRestoreWaits, NameUpstreamRateLimitWaits} {
		assertSeries(t, reg, name, startedAtZero(name))
	}
}

func TestRequestExposition(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	r.ObserveRequest("tools/call", outcome.InputRequired, 0)
	r.ObserveRequest("tools/call", outcome.InputRequired, 0)
	r.ObserveRequest("server/discover", outcome.OK, 0)
	want := `
# HELP mcp_gateway_requests_total Client requests by MCP method and outcome.
# TYPE mcp_gateway_requests_total counter
mcp_gateway_requests_total{method="server/discover",outcome="ok"} 1
mcp_gateway_requests_total{method="tools/call",outcome="input_required"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), NameRequests); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(r.requests.at2(r.methods.of("tools/call"), r.outcomes.of(outcome.InputRequired))); got != 2 {
		t.Errorf("tools/call input_required = %v, want 2", got)
	}
}

func TestDurationIsObservedInSeconds(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	r.ObserveRequest("tools/call", outcome.OK, 1500*time.Millisecond)
	// A minute waiting for the client is not the gateway's latency.
	r.ObserveRequestWaited("tools/call", outcome.OK, 61500*time.Millisecond, time.Minute)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == NameRequestDuration {
			if sum := mf.GetMetric()[0].GetHistogram().GetSampleSum(); sum != 3 {
				t.Errorf("sample sum = %v, want 3 (1.5 s twice)", sum)
			}
			return
		}
	}
	t.Fatalf("%s not gathered", NameRequestDuration)
}

func TestGaugesTrackOpenWork(t *testing.T) {
	tests := []struct {
		name  string
		open  func(r *Recorder) func()
		gauge func(r *Recorder) prometheus.Gauge
	}{
		{"in flight", (*Recorder).InFlight, func(r *Recorder) prometheus.Gauge { return r.inFlight }},
		{"streams", (*Recorder).StreamOpened, func(r *Recorder) prometheus.Gauge { return r.streams }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newTestRecorder(t, Options{})
			first, second := tt.open(r), tt.open(r)
			if got := testutil.ToFloat64(tt.gauge(r)); got != 2 {
				t.Errorf("after two opens = %v, want 2", got)
			}
			first()
			second()
			if got := testutil.ToFloat64(tt.gauge(r)); got != 0 {
				t.Errorf("after closing both = %v, want 0", got)
			}
		})
	}
}

func TestNilRecorderIsSafe(t *testing.T) {
	var r *Recorder
	r.ObserveRequest("tools/call", outcome.OK, time.Second)
	r.ToolCall("a", "b", outcome.OK)
	r.SetKnownTools("a", []string{"b"})
	r.ObserveUpstream("a", "tools/call", outcome.OK, time.Second)
	r.AuthFailure(AuthMissing)
	r.AuthzDecision(DecisionAllow, "a")
	r.MRTREvent(EventRejected, RejectExpired)
	r.RateLimit(RateAllowed)
	r.ListCache(true)
	r.RedisError(RedisOpPing)
	r.SetUpstreamUp("a", true)
	r.SetCircuitState("a", CircuitOpen)
	r.InFlight()()
	r.StreamOpened()()
}

func TestRegisterRuntime(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := RegisterRuntime(reg); err != nil {
		t.Fatalf("RegisterRuntime: %v", err)
	}
	if n, err := testutil.GatherAndCount(reg, "go_goroutines"); err != nil || n != 1 {
		t.Errorf("go_goroutines series = %d (%v), want 1", n, err)
	}
	wantErrs(t, RegisterRuntime(reg), ErrRegister)
}

func TestMetricNamesAreRegistered(t *testing.T) {
	r, reg := newTestRecorder(t, Options{Upstreams: []string{"a"}})
	touchEverything(r)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
	}
	for _, name := range MetricNames() {
		if !got[name] {
			t.Errorf("MetricNames lists %s but the recorder did not export it", name)
		}
	}
	if len(got) != len(MetricNames()) {
		t.Errorf("recorder exports %d families, MetricNames lists %d", len(got), len(MetricNames()))
	}
}

// touchEverything creates at least one series in every family.
func touchEverything(r *Recorder) {
	UpstreamRateLimitWait(r, "a")
	UpstreamRateLimitWait(r, "bogus")
	for _, m := range append(Methods(), "bogus") {
		for _, o := range append(Outcomes(), "bogus") {
			r.ObserveRequestWaited(m, o, time.Second, time.Millisecond)
			r.ObserveUpstream("a", m, o, time.Millisecond)
		}
	}
	r.SetKnownTools("a", []string{"t"})
	r.ToolCall("a", "t", outcome.OK)
	for _, reason := range AuthReasons() {
		r.AuthFailure(reason)
	}
	r.AuthzDecision(DecisionAllow, "a")
	for _, e := range Events() {
		r.MRTREvent(e, RejectReplayed)
	}
	r.RateLimit(RateAllowed)
	r.ListCache(true)
	r.RedisError(RedisOpNonce)
	r.ListenDropped(DropOverflow, 1)
	r.PinDrift("a", "text-changed", "confirm")
	PinRestoreWait(r, "a")
	r.InFlight()()
	r.StreamOpened()()
	r.SetUpstreamUp("a", true)
	r.SetCircuitState("a", CircuitClosed)
}
