package metrics

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcp-gateway/gateway/internal/outcome"
)

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func countSeries(t *testing.T, reg prometheus.Gatherer, name string) int {
	t.Helper()
	n, err := testutil.GatherAndCount(reg, name)
	if err != nil {
		t.Fatalf("GatherAndCount(%s): %v", name, err)
	}
	return n
}

// TestCardinalityIsBounded drives every known label value plus 10,000
// distinct unknown tools, methods, outcomes and upstreams, and checks that
// each family holds exactly the closed-set product and no more.
func TestCardinalityIsBounded(t *testing.T) {
	upstreams := []string{"a", "b"}
	r, reg := newTestRecorder(t, Options{Upstreams: upstreams})
	known := names("k", 10)
	r.SetKnownTools("a", known)
	outcomes := append(Outcomes(), "bogus")
	methods := append(Methods(), "bogus")
	for i := range 10_000 {
		unknown := fmt.Sprintf("unknown-%d", i)
		o := outcomes[i%len(outcomes)]
		for _, u := range []string{"a", "b", unknown} {
			r.ToolCall(u, unknown, o)
			r.ObserveUpstream(u, unknown, o, time.Millisecond)
			r.AuthzDecision(unknown, u)
		}
		r.ObserveRequest(unknown, unknown, time.Millisecond)
		r.AuthFailure(unknown)
		r.MRTREvent(EventRejected, unknown)
		r.RedisError(unknown)
		r.RateLimit(unknown)
	}
	for _, o := range outcomes {
		for _, tool := range known {
			r.ToolCall("a", tool, o)
		}
		for _, m := range methods {
			r.ObserveRequest(m, o, time.Millisecond)
			for _, u := range []string{"a", "b", "zzz"} {
				r.ObserveUpstream(u, m, o, time.Millisecond)
			}
		}
	}
	nOut, nMeth, nUp := len(Outcomes())+1, len(Methods())+1, len(upstreams)+1
	tests := []struct {
		metric string
		want   int
	}{
		// a: 10 known tools + _other; b and _other upstream: _other only.
		{NameToolCalls, (len(known)+1)*nOut + nOut + nOut},
		{NameRequests, nMeth * nOut},
		{NameRequestDuration, nMeth},
		{NameUpstreamRequests, nUp * nMeth * nOut},
		{NameUpstreamDuration, nUp * nMeth},
		{NameAuthzDecisions, nUp}, // only the _other decision was used
		// The series started at 0, and one for _other.
		{NameAuthFailures, len(startedAtZero(NameAuthFailures)) + 1},
		{NameMRTREvents, len(startedAtZero(NameMRTREvents)) + 1},
		{NameRedisErrors, len(startedAtZero(NameRedisErrors)) + 1},
		{NameRateLimitDecisions, len(startedAtZero(NameRateLimitDecisions)) + 1},
		{NameUpstreamUp, 0}, // never set
		{NameBuildInfo, 1},
	}
	for _, tt := range tests {
		t.Run(tt.metric, func(t *testing.T) {
			if got := countSeries(t, reg, tt.metric); got != tt.want {
				t.Errorf("%s has %d series, want exactly %d", tt.metric, got, tt.want)
			}
		})
	}
}

func TestSetKnownTools(t *testing.T) {
	tests := []struct {
		name     string
		maxTools int
		tools    []string
		call     []string
		want     map[string]float64
	}{
		{"cap keeps the first names", 2, []string{"x", "y", "z"}, []string{"x", "y", "z"},
			map[string]float64{`{outcome="ok",tool="x",upstream="a"}`: 1,
				`{outcome="ok",tool="y",upstream="a"}`: 1, `{outcome="ok",tool="_other",upstream="a"}`: 1}},
		{"invalid and duplicate names skipped", 3,
			[]string{"", Other, "bad\xff", strings.Repeat("l", MaxLabelValueLength+1), "x", "x", "y"},
			[]string{"", "bad\xff", "x", "y"},
			map[string]float64{`{outcome="ok",tool="x",upstream="a"}`: 1,
				`{outcome="ok",tool="y",upstream="a"}`: 1, `{outcome="ok",tool="_other",upstream="a"}`: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, reg := newTestRecorder(t, Options{Upstreams: []string{"a"}, MaxToolsPerUpstream: tt.maxTools})
			r.SetKnownTools("a", tt.tools)
			r.SetKnownTools("unknown", tt.tools)
			for _, tool := range tt.call {
				r.ToolCall("a", tool, outcome.OK)
			}
			assertSeries(t, reg, NameToolCalls, tt.want)
		})
	}
}

func TestSetKnownToolsDefaultCap(t *testing.T) {
	r, reg := newTestRecorder(t, Options{Upstreams: []string{"a"}})
	many := names("t", 2*DefaultMaxToolsPerUpstream)
	r.SetKnownTools("a", many)
	for _, tool := range many {
		r.ToolCall("a", tool, outcome.OK)
	}
	if got, want := countSeries(t, reg, NameToolCalls), DefaultMaxToolsPerUpstream+1; got != want {
		t.Errorf("series = %d, want %d", got, want)
	}
}

// TestReplacingToolsDeletesDroppedSeries checks that a tool leaving the
// allowlist loses its series and later calls count as _other, while a kept
// tool keeps its count.
func TestReplacingToolsDeletesDroppedSeries(t *testing.T) {
	r, reg := newTestRecorder(t, Options{Upstreams: []string{"a"}})
	r.SetKnownTools("a", []string{"keep", "drop"})
	r.ToolCall("a", "keep", outcome.OK)
	r.ToolCall("a", "drop", outcome.OK)
	u := r.tools.byName["a"]
	held := (*u.known.Load())["drop"]

	r.SetKnownTools("a", []string{"keep", "new"})
	r.ToolCall("a", "drop", outcome.OK)
	// A call that looked the entry up before the swap must not recreate it.
	r.tools.resolve(u, held, r.outcomes.of(outcome.GatewayError)).Inc()
	r.ToolCall("a", "new", outcome.OK)
	r.ToolCall("a", "keep", outcome.OK)
	assertSeries(t, reg, NameToolCalls, map[string]float64{
		`{outcome="ok",tool="keep",upstream="a"}`:      2,
		`{outcome="ok",tool="new",upstream="a"}`:       1,
		`{outcome="ok",tool="_other",upstream="a"}`:    1,
		`{outcome="error",tool="_other",upstream="a"}`: 1,
	})
}

// TestConcurrentToolCallsAndSwaps runs calls against allowlist swaps (use
// -race); whatever the interleaving, only allowlisted tools and _other remain.
func TestConcurrentToolCallsAndSwaps(t *testing.T) {
	r, reg := newTestRecorder(t, Options{Upstreams: []string{"a"}, MaxToolsPerUpstream: 5})
	lists := [][]string{names("x", 5), names("y", 5)}
	all := append(names("x", 5), names("y", 5)...)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				r.ToolCall("a", all[(i+w)%len(all)], outcome.OK)
			}
		})
	}
	wg.Go(func() {
		for i := range 200 {
			r.SetKnownTools("a", lists[i%2])
		}
	})
	wg.Wait()
	final := map[string]bool{Other: true}
	for _, tool := range lists[1] {
		final[tool] = true
	}
	for k := range series(t, reg, NameToolCalls) {
		tool := strings.SplitN(strings.SplitN(k, `tool="`, 2)[1], `"`, 2)[0]
		if !final[tool] {
			t.Errorf("series %s survives though %q left the allowlist", k, tool)
		}
	}
}

// TestLabelValueControls: a label value holding a control character (C0, DEL or C1) folds like
// any other value the label may not hold.
func TestLabelValueControls(t *testing.T) {
	for r := rune(0); r <= 0xa0; r++ {
		control := r < 0x20 || r >= 0x7f && r <= 0x9f
		if validLabelValue("v"+string(r)) == control {
			t.Errorf("validLabelValue(%q) = %v", "v"+string(r), !control)
		}
	}
}
