package mcptest

import (
	"testing"
	"time"
)

// waitLimit bounds WaitFor. It is a fail-safe against a condition that never comes, far above
// any real wait, not a timing the test asserts.
const waitLimit = 30 * time.Second

// WaitFor polls cond every 5 ms until it holds, for a state other goroutines reach (a stream
// opened, a request received); it fails tb, naming what, if cond does not hold within
// waitLimit.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
