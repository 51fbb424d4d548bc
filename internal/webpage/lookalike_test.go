package webpage

import (
	"strings"
	"testing"
)

// TestLookAlikeWord: the first word that mixes scripts or reads as other ASCII text is named,
// wherever it stands in the text (first, inside, last); text in one script, Cyrillic included,
// and plain ASCII are not marked; the word quoted is bounded.
func TestLookAlikeWord(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"\u0435xample", "\u0435xample mixes Cyrillic and Latin letters"},
		{"rm -rf /tmp/\u0435xample", "\u0435xample mixes Cyrillic and Latin letters"},
		{"go to \u0435xample now", "\u0435xample mixes Cyrillic and Latin letters"},
		{"\uff45xample.com", "\uff45xample reads as example"},
		{"\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440", ""},
		{"plain ascii text, 42 words", ""},
		{"", ""},
		{"caf\u00e9 cr\u00e8me", ""},
		// Not in composed form (NFC): each reads as its composed form, which is other
		// characters to a backend that does not normalise.
		{"cafe\u0301", "cafe\u0301 reads as caf\u00e9 but is written with other characters"},
		{"delete cafe\u0301.txt", "cafe\u0301 reads as caf\u00e9 but is written with other characters"},
		{"\u212bngstr\u00f6m", "\u212bngstr\u00f6m reads as \u00c5ngstr\u00f6m but is written with other characters"},
		{"a\u0301\u0323", "a\u0301\u0323 reads as \u1ea1\u0301 but is written with other characters"},
		{"\u1100\u1161", "\u1100\u1161 reads as \uac00 but is written with other characters"},
	} {
		if got := LookAlikeWord(tt.in); got != tt.want {
			t.Errorf("LookAlikeWord(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := strings.Repeat("a", 60) + "\u0430"
	if got := LookAlikeWord(long); !strings.HasPrefix(got, strings.Repeat("a", maxLookAlikeRunes)+"\u2026 mixes") {
		t.Errorf("long word quoted as %q", got)
	}
}

// TestLookAlikeWordASCIIAllocatesNothing: the approval page runs it on every string of the
// arguments; ASCII text, the common case, must not cost a copy of the text or a map.
// TestNameOfNotComposed: a name not in composed form (NFC) is flagged as reading as its
// composed form; one in composed form is not.
func TestNameOfNotComposed(t *testing.T) {
	if n := NameOf("cafe\u0301"); n.Folds != "caf\u00e9" || !n.Flagged() {
		t.Errorf("NameOf(decomposed) = %+v", n)
	}
	if n := NameOf("caf\u00e9"); n.Flagged() {
		t.Errorf("NameOf(composed) = %+v", n)
	}
}

func TestLookAlikeWordASCIIAllocatesNothing(t *testing.T) {
	s := strings.Repeat("path/to/a file name ", 1000)
	if n := testing.AllocsPerRun(10, func() { _ = LookAlikeWord(s) }); n != 0 {
		t.Errorf("LookAlikeWord on ASCII text: %v allocations, want 0", n)
	}
}
