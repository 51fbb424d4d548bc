package mcptest

import (
	"bytes"
	"os"
	"testing"
)

// Golden compares got with the golden file at path. With update set (the test package's flag,
// named by flagName in the messages) it rewrites the file instead, for a change whose new output
// has been reviewed.
func Golden(tb testing.TB, path string, got []byte, update bool, flagName string) {
	tb.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run with %s to create it)", err, flagName)
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("%s differs (review, then run with %s):\n--- got\n%s\n--- want\n%s", path, flagName, got, want)
	}
}
