package guardrails

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/racetest"
)

// TestReportReused: a report checks one message after another (ScanArgumentsInto,
// ScanResultInto) as a new report would: what a check found is not carried into the next,
// whatever the direction, and a clean check into a kept report allocates nothing.
func TestReportReused(t *testing.T) {
	cfg := everything("redact")
	cfg.AllowedHosts = []string{"*.example.com"}
	r := testEngine(t, cfg).Rule(KindTool, "up", "tool")
	args, result := benchTexts()
	dirtyArgs := []byte(`{"k":"AKIAIOSFODNN7EXAMPLE alice@example.org"}`)
	dirtyResult := []byte(`{"content":[{"type":"text","text":"AKIAIOSFODNN7EXAMPLE"}],"_meta":{"` + MetaKey + `":{"x":1}}}`)
	var rep Report
	for range 3 {
		r.ScanArgumentsInto(&rep, dirtyArgs)
		if !rep.Redacted() || rep.Counts[DetEmail] != 1 || rep.Dir != DirArguments {
			t.Fatalf("dirty arguments: %+v", rep)
		}
		r.ScanResultInto(&rep, dirtyResult)
		if fresh := r.ScanResult(dirtyResult); string(rep.Rewrite(dirtyResult)) != string(fresh.Rewrite(dirtyResult)) ||
			rep.Counts != fresh.Counts || rep.Dir != DirResult || rep.meta != fresh.meta || rep.own != fresh.own {
			t.Fatalf("dirty result: %+v, a new report %+v", rep, fresh)
		}
		r.ScanResultInto(&rep, result)
		if !rep.Clean() || rep.Redacted() || len(rep.Findings) != 0 || rep.Counts != ([numDetectors]uint32{}) ||
			rep.meta != (span{}) || rep.own != (span{}) {
			t.Fatalf("clean result after a dirty one: %+v", rep)
		}
		r.ScanArgumentsInto(&rep, args)
		if !rep.Clean() || rep.Redacted() || rep.Dir != DirArguments {
			t.Fatalf("clean arguments after a dirty result: %+v", rep)
		}
	}
	if racetest.Enabled {
		return // the race detector drops pooled walkers at random
	}
	if n := testing.AllocsPerRun(50, func() { r.ScanResultInto(&rep, result) }); n != 0 {
		t.Errorf("a clean result into a kept report: %v allocations", n)
	}
}

// TestResetKeepsBoundedBuffers: a report given back to the pool keeps at most 256 redactions'
// worth of buffer (docs/guardrails.md), so one result made of matches does not pin its size in
// every pooled request state afterwards; a smaller one is kept for reuse.
func TestResetKeepsBoundedBuffers(t *testing.T) {
	r := testEngine(t, everything("redact")).Rule(KindTool, "b", "t")
	var rep Report
	for _, tc := range []struct {
		matches int
		kept    bool
	}{{100, true}, {300, false}} {
		r.ScanResultInto(&rep, []byte(`{"text":"`+strings.Repeat("a@example.org ", tc.matches)+`"}`))
		if len(rep.edits) != tc.matches {
			t.Fatalf("%d redactions, want %d", len(rep.edits), tc.matches)
		}
		rep.Reset("", DirResult)
		if c := cap(rep.edits); (c > 0) != tc.kept || c > 256 {
			t.Errorf("after %d redactions the reset report keeps room for %d", tc.matches, c)
		}
	}
}
