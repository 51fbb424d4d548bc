package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcp-gateway/gateway/internal/approval"
)

// TestApprovalMetrics: every series exists from the start, events count where they belong, and
// a value outside the closed sets is counted as Other instead of minting a series.
func TestApprovalMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := NewApproval(reg)
	if err != nil {
		t.Fatal(err)
	}
	before, err := testutil.GatherAndCount(reg)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 2 + 3 + len(approval.RefusalReasons()) + 1; before != want {
		t.Errorf("%d series at start, want %d", before, want)
	}
	a.PageShown()
	a.SignIn(true)
	a.SignIn(false)
	a.Decided(approval.Approved)
	a.Decided("maybe")
	a.Refused(approval.RefusedCSRF)
	a.Refused("made-up <reason>")
	if n, _ := testutil.GatherAndCount(reg); n != before {
		t.Errorf("series grew from %d to %d", before, n)
	}
	for want, got := range map[float64]float64{
		1: testutil.ToFloat64(a.pages),
		2: testutil.ToFloat64(a.signIns.WithLabelValues("ok")) + testutil.ToFloat64(a.signIns.WithLabelValues("failed")),
	} {
		if got != want {
			t.Errorf("got %v, want %v", got, want)
		}
	}
	if testutil.ToFloat64(a.decisions.WithLabelValues(Other)) != 1 || testutil.ToFloat64(a.refusals.WithLabelValues(Other)) != 1 ||
		testutil.ToFloat64(a.refusals.WithLabelValues(approval.RefusedCSRF)) != 1 {
		t.Error("events not counted under their closed labels")
	}
	var nilRecorder *Approval
	nilRecorder.PageShown() // a nil recorder records nothing and does not panic
	if err := testutil.GatherAndCompare(reg, strings.NewReader(""), "no_such_metric"); err != nil {
		t.Error(err)
	}
}
