// Package racetest tells a test whether its binary runs under the race detector, so that a test
// of pure computation can step aside there.
package racetest

import "testing"

// SkipPureComputation skips a test of pure computation under the race detector, which finds
// nothing in it and makes it about ten times as slow: one that starts no goroutine and shares
// no pool, cache or package-level mutable state with anything. The package's run without -race
// (`make unit` runs each package once so) is where it runs.
func SkipPureComputation(t *testing.T) {
	t.Helper()
	if Enabled {
		t.Skip("pure computation on one goroutine: the race detector finds nothing here; run without -race")
	}
}
