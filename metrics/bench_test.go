package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/outcome"
)

func benchRecorder(b *testing.B) *Recorder {
	b.Helper()
	r, err := New(prometheus.NewRegistry(), Options{Upstreams: []string{"github", "slack", "jira"}})
	if err != nil {
		b.Fatal(err)
	}
	r.SetKnownTools("github", names("tool_", 500))
	return r
}

func BenchmarkObserveRequest(b *testing.B) {
	r := benchRecorder(b)
	b.ReportAllocs()
	for b.Loop() {
		r.ObserveRequest("tools/call", outcome.OK, 3*time.Millisecond)
	}
}

func BenchmarkObserveUpstream(b *testing.B) {
	r := benchRecorder(b)
	b.ReportAllocs()
	for b.Loop() {
		r.ObserveUpstream("github", "tools/call", outcome.OK, 3*time.Millisecond)
	}
}

func BenchmarkToolCallKnown(b *testing.B) {
	r := benchRecorder(b)
	b.ReportAllocs()
	for b.Loop() {
		r.ToolCall("github", "tool_42", outcome.OK)
	}
}

func BenchmarkToolCallUnknown(b *testing.B) {
	r := benchRecorder(b)
	b.ReportAllocs()
	for b.Loop() {
		r.ToolCall("gitlab", "not_a_tool", outcome.OK)
	}
}

func BenchmarkInFlight(b *testing.B) {
	r := benchRecorder(b)
	b.ReportAllocs()
	for b.Loop() {
		r.InFlight()()
	}
}

func BenchmarkEvents(b *testing.B) {
	r := benchRecorder(b)
	b.ReportAllocs()
	for b.Loop() {
		r.AuthzDecision(DecisionAllow, "github")
		r.MRTREvent(EventRejected, RejectExpired)
		r.RateLimit(RateAllowed)
		r.ListCache(true)
	}
}

// BenchmarkRequestPathParallel is what one forwarded tools/call records,
// from all cores at once: contention shows up here, not in the loops above.
func BenchmarkRequestPathParallel(b *testing.B) {
	r := benchRecorder(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			done := r.InFlight()
			r.AuthzDecision(DecisionAllow, "github")
			r.ObserveUpstream("github", "tools/call", outcome.OK, 2*time.Millisecond)
			r.ToolCall("github", "tool_7", outcome.OK)
			r.ObserveRequest("tools/call", outcome.OK, 3*time.Millisecond)
			done()
		}
	})
}

func BenchmarkNilRecorder(b *testing.B) {
	var r *Recorder
	b.ReportAllocs()
	for b.Loop() {
		r.ObserveRequest("tools/call", outcome.OK, time.Millisecond)
		r.ToolCall("github", "tool_7", outcome.OK)
	}
}
