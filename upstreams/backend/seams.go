package backend

// seams are the points where this package's tests hold or watch a single-flight on its way:
// a caller that decided to start a flight and reaches it only after another's has run, or a
// caller that joins a flight another started. The gateway never sets them, so every seam is
// nil outside tests; a test that sets one puts it back when it ends. The tests of this package
// run one at a time, so a seam one of them sets is reached by its own backends alone.
var seams struct {
	// eraBeforeFlight runs after awaitEra's looks and before it joins or starts the era probe.
	eraBeforeFlight func()
	// eraInFlight runs at the start of each era probe flight; eraJoined after a caller started
	// or joined one.
	eraInFlight, eraJoined func()
	// credentialsBeforeFlight runs after a token cache miss and before the token flight.
	credentialsBeforeFlight func()
}
