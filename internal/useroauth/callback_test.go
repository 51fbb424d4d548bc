package useroauth

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLoggedScope: the scope a connection's log line repeats is bounded, cut on a character
// boundary and marked with its length; a short one is logged whole.
func TestLoggedScope(t *testing.T) {
	t.Parallel()
	if got := loggedScope("repo read:user"); got != "repo read:user" {
		t.Errorf("short scope logged as %q", got)
	}
	for _, scope := range []string{strings.Repeat("a", 70000), strings.Repeat("a", maxLoggedScope-1) + "é" + strings.Repeat("b", 100)} {
		got := loggedScope(scope)
		head, _, _ := strings.Cut(got, "…")
		if len(head) > maxLoggedScope || !utf8.ValidString(got) || !strings.HasSuffix(got, "("+strconv.Itoa(len(scope))+" bytes)") ||
			!strings.HasPrefix(scope, head) {
			t.Errorf("scope of %d bytes logged as %d bytes: %q…", len(scope), len(got), got[:40])
		}
	}
}
