package guardrails

import "testing"

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
	if raceBuild() {
		return // the race detector drops pooled walkers at random
	}
	if n := testing.AllocsPerRun(50, func() { r.ScanResultInto(&rep, result) }); n != 0 {
		t.Errorf("a clean result into a kept report: %v allocations", n)
	}
}
