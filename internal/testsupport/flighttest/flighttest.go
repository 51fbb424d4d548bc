// Package flighttest drives the race a single-flight must survive: a caller that decided to start
// a flight (it missed a cache, found no verifier, saw the era unknown) and reaches the flight only
// after another caller's flight for the same thing has run.
package flighttest

// HeldFirst runs first in a goroutine that hook holds between its decision to start a flight and
// the flight, runs second meanwhile (to its end), then releases first and returns its error.
//
// hook is the code's test seam, called once on the path between the miss and the flight; HeldFirst
// sets it, and the held call clears it, so only first is held.
func HeldFirst(hook *func(), first func() error, second func()) error {
	missed, release := make(chan struct{}), make(chan struct{})
	*hook = func() {
		*hook = nil
		close(missed)
		<-release
	}
	done := make(chan error, 1)
	go func() { done <- first() }()
	<-missed
	second()
	close(release)
	return <-done
}
