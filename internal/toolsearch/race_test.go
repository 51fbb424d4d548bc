//go:build race

package toolsearch

// raceEnabled: this test binary runs under the race detector.
const raceEnabled = true
