//go:build !race

package racetest

// Enabled: this binary runs under the race detector.
const Enabled = false
