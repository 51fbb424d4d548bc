package mcphttp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClientNameBounded: the client's name for itself is cut at 128 characters, never inside
// one: a cut through a multi-byte character would show the page a U+FFFD it did not send, and
// count as a hidden character in the page's warning.
func TestClientNameBounded(t *testing.T) {
	long := strings.Repeat("€", 200)
	got := clientName([]byte(`{"name":"` + long + `","version":"1"}`))
	if !utf8.ValidString(got) || utf8.RuneCountInString(got) != 129 || !strings.HasSuffix(got, "…") {
		t.Errorf("clientName = %q (%d runes, valid %v)", got, utf8.RuneCountInString(got), utf8.ValidString(got))
	}
	if got := clientName([]byte(`{"name":"Claude","version":"1.2"}`)); got != "Claude 1.2" {
		t.Errorf("clientName = %q", got)
	}
}
