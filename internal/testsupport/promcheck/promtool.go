package promcheck

import (
	"os/exec"
	"testing"
)

// Promtool returns the path of promtool, Prometheus' rule checker, and fails the test when it
// is missing: the alert rules' unit tests are part of the suite, never skipped. .ci/setup
// installs it with Debian's prometheus package (the daemon is not started); any promtool 2.42
// or later on PATH does as well.
func Promtool(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		tb.Fatalf("promtool is needed to test the alert rules and is not on PATH (%v): run .ci/setup, "+
			"which installs Debian's prometheus package", err)
	}
	return path
}
