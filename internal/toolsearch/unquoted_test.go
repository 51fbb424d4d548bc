package toolsearch

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// unquotedByScan is unquoted as first written: every opening quote scans to the end of the
// query for its close, which is quadratic in a query of unmatched quotes. The reference the
// one-pass version is held to.
func unquotedByScan(fields []string) []string {
	out := fields[:0:0]
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		q := f[0]
		if strings.IndexByte(quoteChars, q) < 0 {
			out = append(out, f)
			continue
		}
		end := i
		for end < len(fields) && !closes(fields[end], q, end == i) {
			end++
		}
		if end == len(fields) {
			out = append(out, f)
			continue
		}
		i = end
	}
	return out
}

// TestUnquotedMatchesTheScan: the one-pass reading of quotations keeps exactly the fields the
// scan from each opening quote kept, on queries made of words, quotes of the three kinds at
// either end of a field, lone quotes, apostrophes and trailing punctuation.
func TestUnquotedMatchesTheScan(t *testing.T) {
	parts := []string{"find", "'a", "b'", "\"x", "y\"", "`c", "d`", "'", "\"", "`", "'e'", "what's",
		"f'.", "\"g\",", "h`)", "``", "''", "\"\""}
	r := rand.New(rand.NewPCG(7, 11))
	for range 20000 {
		fields := make([]string, 1+r.IntN(12))
		for i := range fields {
			fields[i] = parts[r.IntN(len(parts))]
		}
		want := unquotedByScan(slices.Clone(fields))
		if got := unquoted(slices.Clone(fields)); !slices.Equal(got, want) {
			t.Fatalf("unquoted(%q) = %q, want %q", fields, got, want)
		}
	}
}

// BenchmarkUnquotedUnmatched: a query of the largest size made of unmatched quotes, which the
// scan from each quote read in time quadratic in its length.
func BenchmarkUnquotedUnmatched(b *testing.B) {
	fields := strings.Fields(strings.Repeat("`x ", 1024/3))
	b.ReportAllocs()
	for b.Loop() {
		unquoted(fields)
	}
}
