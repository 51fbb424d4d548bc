//go:build race

package mcphttp

// raceEnabled: this test binary runs under the race detector.
const raceEnabled = true
