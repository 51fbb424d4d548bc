package mcphttp

import (
	"context"
	"time"
)

// Bounds of a PacedWait's pauses: the first look comes soon after the client's answer, later
// ones further apart, so that a user who takes minutes costs a few looks a minute.
const (
	pacedWaitFirst = 250 * time.Millisecond
	pacedWaitMax   = 2 * time.Second
)

// PacedWait is a wait for a user who was sent to a page (the gateway's approval page, a
// backend's URL-mode elicitation) and whose outcome the gateway looks for now and then until an
// end: first after pacedWaitFirst, then twice as far apart each time up to pacedWaitMax.
type PacedWait struct {
	now   func() time.Time
	end   time.Time
	every time.Duration
	// after is the timer of a pause, on the same clock as now; nil is a real timer. A test
	// gives one that moves its manual clock, so that nothing waits for real time.
	after func(d time.Duration) <-chan time.Time
}

// NewPacedWait starts a wait that gives up at end, on the clock now.
func NewPacedWait(now func() time.Time, end time.Time) *PacedWait {
	return &PacedWait{now: now, end: end, every: pacedWaitFirst}
}

// Pause waits until the next look and gives the time it waited to waited (a person's think time,
// which the latency metrics leave out): false when the wait's end passed (nothing more to wait
// for) or ctx ended. The caller holds the response open meanwhile (Sink.KeepAlive); the
// keep-alives count the response's silence from the last byte sent, so a caller may pause them
// between pauses (to retry a backend) without putting off the next comment.
func (w *PacedWait) Pause(ctx context.Context, waited func(time.Duration)) bool {
	start := w.now()
	left := w.end.Sub(start)
	if left <= 0 {
		return false
	}
	defer func() { waited(w.now().Sub(start)) }()
	d := min(w.every, left)
	w.every = min(2*w.every, pacedWaitMax)
	var fired <-chan time.Time
	if w.after != nil {
		fired = w.after(d)
	} else {
		timer := time.NewTimer(d)
		defer timer.Stop()
		fired = timer.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-fired:
		return true
	}
}
