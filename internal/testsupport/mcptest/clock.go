package mcptest

import (
	"sync/atomic"
	"time"
)

// Clock is a manual clock for code that takes an injected Now: it moves only when Advance is
// called. It is safe for concurrent use and lock-free, so that parallel benchmarks measure the
// code under test rather than the clock.
type Clock struct {
	ns atomic.Int64 // Unix nanoseconds
}

// NewClock returns a Clock that reads start until it is advanced.
func NewClock(start time.Time) *Clock {
	c := &Clock{}
	c.ns.Store(start.UnixNano())
	return c
}

// Now returns the clock's current time, in UTC.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Advance moves the clock forward by d (backward for a negative d).
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }
