package mcphttp

import (
	"context"
	"testing"
	"time"
)

// TestPacedWait: the pauses double from pacedWaitFirst up to pacedWaitMax, the last one is cut
// to the wait's end, each is given to waited, and the wait reports false once its end passed or
// its context ended. The clock is a fake one that Pause's own waits do not move, so the test
// reads the planned pauses, never measures one.
func TestPacedWait(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	w := NewPacedWait(clock, now.Add(3*time.Second))
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 1250 * time.Millisecond}
	for i, d := range want {
		if w.every != min(pacedWaitFirst<<i, pacedWaitMax) {
			t.Fatalf("pause %d: every = %v", i, w.every)
		}
		before := w.every
		var waited time.Duration
		// Moved by hand: the real wait is the smaller of every and what is left.
		if left := w.end.Sub(now); min(before, left) != d {
			t.Fatalf("pause %d would wait %v, want %v", i, min(before, left), d)
		}
		if !w.Pause(context.Background(), func(x time.Duration) { waited += x }) {
			t.Fatalf("pause %d ended the wait early", i)
		}
		if waited != 0 { // the fake clock did not move during the pause
			t.Fatalf("pause %d: waited %v on a still clock", i, waited)
		}
		now = now.Add(d)
	}
	if w.every != pacedWaitMax {
		t.Fatalf("every = %v, want capped at %v", w.every, pacedWaitMax)
	}
	if w.Pause(context.Background(), func(time.Duration) { t.Fatal("waited after the end") }) {
		t.Fatal("a pause after the wait's end reported more to wait for")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w = NewPacedWait(clock, now.Add(time.Hour))
	if w.Pause(ctx, func(time.Duration) {}) {
		t.Fatal("a pause under an ended context reported more to wait for")
	}
}
