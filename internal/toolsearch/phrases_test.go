package toolsearch

import (
	"strings"
	"testing"
)

// TestPhraseAt: a phrase is matched on whole words, longest first, whatever their case and the
// punctuation around them, and never runs past a word that ends a clause.
func TestPhraseAt(t *testing.T) {
	for _, tt := range []struct {
		query string
		n     int
		means string
	}{
		{"set up a repo", 2, "create"},
		{"Set UP a repo", 2, "create"},
		{"GET RID OF the branch", 3, "delete remove"},
		{"bring up to date", 4, "update"},
		{"bring up the logs", 2, "show"},
		{"(what's in) the box", 2, "content list show"},
		{"what is in", 3, "content list show"},
		{"set, up", 0, ""},
		{"look at, the page", 2, "view show"},
		{"set Ünder", 0, ""},
		{"set " + strings.Repeat("u", 100), 0, ""},
		{"what", 0, ""},
		{"repository", 0, ""},
	} {
		n, means := phraseAt(strings.Fields(tt.query))
		if n != tt.n || means != tt.means {
			t.Errorf("phraseAt(%q) = %d, %q; want %d, %q", tt.query, n, means, tt.n, tt.means)
		}
	}
}

// TestPhraseAtAllocates: trying the phrases a lower-case query's words begin builds no string;
// "what" and "is" begin phrases and start most questions.
func TestPhraseAtAllocates(t *testing.T) {
	fields := strings.Fields("what is in the shared drive")
	if n := testing.AllocsPerRun(100, func() { phraseAt(fields); phraseAt(fields[1:]) }); n != 0 {
		t.Errorf("phraseAt allocates %v times per call; want 0", n)
	}
}

// TestReadPhrasesAllocates: replacing a query's phrases costs the one slice of fields it
// returns, however many phrases it replaces.
func TestReadPhrasesAllocates(t *testing.T) {
	fields := strings.Fields("set up a runner, then look up its logs and shut down the old one")
	if got := readPhrases(fields); strings.Join(got, " ") != "create a runner, then search find its logs and stop close the old one" {
		t.Fatalf("readPhrases = %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { readPhrases(fields) }); n != 1 {
		t.Errorf("readPhrases allocates %v times per call; want 1", n)
	}
}
