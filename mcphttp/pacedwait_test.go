package mcphttp

import (
	"context"
	"slices"
	"testing"
	"time"
)

// manualAfter is a PacedWait's timer on a manual clock: it appends each pause it is asked for to
// *pauses, moves *now on by it and fires at once.
func manualAfter(now *time.Time, pauses *[]time.Duration) func(time.Duration) <-chan time.Time {
	return func(d time.Duration) <-chan time.Time {
		*pauses = append(*pauses, d)
		*now = now.Add(d)
		fired := make(chan time.Time, 1)
		fired <- *now
		return fired
	}
}

// TestPacedWait: the pauses double from pacedWaitFirst up to pacedWaitMax, the last one is cut
// to the wait's end, each is given to waited, and the wait reports false once its end passed or
// its context ended. The pauses run on a manual clock (PacedWait.after moves it by the pause it
// is asked for), so the test reads the pauses Pause asks for and waits for no real time.
func TestPacedWait(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	var pauses []time.Duration
	w := NewPacedWait(clock, now.Add(3*time.Second))
	w.after = manualAfter(&now, &pauses)
	var waited time.Duration
	for i := 0; w.Pause(context.Background(), func(d time.Duration) { waited += d }); i++ {
		if i == 100 {
			t.Fatal("the wait never ended")
		}
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 1250 * time.Millisecond}
	if !slices.Equal(pauses, want) || waited != 3*time.Second {
		t.Fatalf("pauses %v (waited %v), want %v (3s)", pauses, waited, want)
	}
	if w.every != pacedWaitMax {
		t.Fatalf("every = %v, want capped at %v", w.every, pacedWaitMax)
	}

	// A long wait: the pauses stop growing at pacedWaitMax.
	pauses = nil
	w = NewPacedWait(clock, now.Add(time.Minute))
	w.after = manualAfter(&now, &pauses)
	for w.Pause(context.Background(), func(time.Duration) {}) {
	}
	if len(pauses) < 5 || slices.Max(pauses) != pacedWaitMax || pauses[4] != pacedWaitMax {
		t.Fatalf("pauses of a minute's wait: %v, want them capped at %v from the fifth", pauses, pacedWaitMax)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w = NewPacedWait(clock, now.Add(time.Hour))
	w.after = func(time.Duration) <-chan time.Time { return nil } // never fires
	if w.Pause(ctx, func(time.Duration) {}) {
		t.Fatal("a pause under an ended context reported more to wait for")
	}
}
