package toolsearch

import "strings"

// A general thesaurus: an experiment, off in the gateway (docs/search.md § WordNet).
// internal/tools/wordnet derives a table from WordNet 3.1 (testdata/wordnet.txt; WordNet's
// licence heads it): for each noun and verb, keyed by its stem as Tokens stems words, the words
// WordNet relates to it in its most frequent senses, in three tab-separated columns (the synonyms
// and derived forms, a verb's broader verbs, a noun's broader nouns). With a table, a query word
// also looks for those words, at weights below the hand-written table's, as it looks for its
// synonyms. It did not rank better than words alone on the evaluation's task sets, so the gateway
// (NewBM25) uses none; tests build an index with one (withThesaurus) to measure it again.

// thesaurus is how an index uses a table of related words: WordNet's, or the word associations
// learned from labelled tasks (mine_test.go; docs/search.md § Learned associations), another
// experiment that did not help.
type thesaurus struct {
	// table is the table as internal/tools/wordnet writes it: lines sorted by stem, each the
	// stem and its columns, after a licence of '#' lines.
	table string
	// weights are those of the table's columns, in order; a zero weight leaves a column out.
	weights [3]float64
	// gated: only a query word that no tool of the caller's view holds looks for related words.
	gated bool
}

// withThesaurus makes ix rank with th (nil: none) and returns it.
func (ix *BM25) withThesaurus(th *thesaurus) *BM25 {
	ix.thesaurus = th
	return ix
}

// line is the columns of stem's line of the table ("" when it has none), found by binary search
// over the sorted lines, so no index of the table is built or kept. The licence's lines, which
// begin with '#', sort before every stem.
func (th *thesaurus) line(stem string) string {
	text := th.table
	lo, hi := 0, len(text) // the lines that start before lo hold smaller stems; those from hi on do not
	for lo < hi {
		mid := (lo + hi) / 2
		start := strings.LastIndexByte(text[:mid], '\n') + 1
		if key, _ := lineKey(text[start:]); key >= stem {
			hi = start
			continue
		}
		end := strings.IndexByte(text[mid:], '\n')
		if end < 0 {
			return ""
		}
		lo = mid + end + 1
	}
	if key, cols := lineKey(text[lo:]); key == stem {
		return cols
	}
	return ""
}

// lineKey splits the line that begins s into its stem and its columns.
func lineKey(s string) (key, cols string) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	key, cols, _ = strings.Cut(s, "\t")
	return key, cols
}

// addThesaurus appends to out the words the table relates to w that some tool of the index
// holds, each at its column's weight. Every such word is taken, not the nearest few, so a word
// that only hidden tools hold cannot take the place of one a caller's tool holds: it weighs
// nothing, as it would if w were that word.
func (ix *BM25) addThesaurus(out []expansion, w string, v *view) []expansion {
	th := ix.thesaurus
	if th.gated && v.df(ix.postings[w]) > 0 {
		return out
	}
	cols := th.line(w)
	for c := 0; cols != "" && c < len(th.weights); c++ {
		var col string
		col, cols, _ = strings.Cut(cols, "\t")
		for th.weights[c] > 0 && col != "" {
			var t string
			t, col, _ = strings.Cut(col, " ")
			if _, ok := ix.postings[t]; ok {
				out = append(out, expansion{term: t, weight: th.weights[c], thesaurus: true})
			}
		}
	}
	return out
}
