package backend

import (
	"errors"
	"testing"
	"time"
)

// TestProbeBackoffGrowsWithJitter: each failed era probe doubles the wait from
// probeBackoffBase up to probeBackoffMax, each wait drawn between half and all of it; a success
// forgets the failures, and the next failure starts from the base again.
func TestProbeBackoffGrowsWithJitter(t *testing.T) {
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	cause := errors.New("bad answer")
	for range 50 {
		var p probeBackoff
		for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
			16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second} {
			p.failure(now, cause)
			if wait := p.until.Sub(now); wait < want/2 || wait > want {
				t.Fatalf("failure %d: wait %s, want within [%s, %s]", i+1, wait, want/2, want)
			}
			if err := p.pending(now.Add(want / 2).Add(-time.Nanosecond)); !errors.Is(err, cause) {
				t.Fatalf("failure %d: pending = %v before the backoff passed", i+1, err)
			}
			if err := p.pending(now.Add(want)); err != nil {
				t.Fatalf("failure %d: pending = %v after the backoff passed", i+1, err)
			}
		}
		p.success()
		if err := p.pending(now); err != nil {
			t.Fatalf("pending after a success = %v", err)
		}
		p.failure(now, cause)
		if wait := p.until.Sub(now); wait > time.Second {
			t.Fatalf("after a success the wait is %s, want the base again", wait)
		}
	}
}
