package metrics

import "testing"

// TestLegacyBridgeSeries: the bridge counter keeps to its closed label sets (anything else
// folds into Other, never a new series), the pending gauge moves both ways, and a nil
// Recorder ignores both.
func TestLegacyBridgeSeries(t *testing.T) {
	r, reg := newTestRecorder(t, Options{})
	for _, name := range LegacyAskMetricNames() {
		if got := series(t, reg, name); len(got) != 0 {
			t.Errorf("%s exported before the bridge was used: %v", name, got)
		}
	}
	r.LegacyAsk(AskKindConfirm, AskAnswered)
	r.LegacyAsk(AskKindConfirm, AskAnswered)
	r.LegacyAsk("tasks/get", "exploded")
	r.LegacyAsksPending(3)
	r.LegacyAsksPending(-1)
	got := series(t, reg, NameLegacyAsks)
	want := map[string]float64{
		`{kind="confirm",outcome="answered"}`: 2,
		`{kind="_other",outcome="_other"}`:    1,
	}
	if len(got) != len(want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if g := series(t, reg, NameLegacyAsksPending)[`{}`]; g != 2 {
		t.Errorf("pending = %v, want 2", g)
	}
	var nilRec *Recorder
	nilRec.LegacyAsk(AskKindRoots, AskLost)
	nilRec.LegacyAsksPending(1)
}
