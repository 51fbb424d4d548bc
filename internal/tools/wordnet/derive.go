package main

import (
	"bufio"
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/toolsearch"
)

// The classes of a related word, strongest first; the table's columns in this order.
const (
	classSame = iota
	classBroader
	classKind
	numClasses
)

// options are what a run of the command chooses (its flags): the most senses kept per word
// (kept: "run" has 57 senses as a noun and a verb; the ones users mean are few) and the parts of
// speech read ("n", "v" or "nv").
type options struct {
	senses int
	pos    string
}

// defaults are the options the table was derived with.
var defaults = options{senses: 3, pos: "nv"}

// minShare: a sense beyond the most tagged is kept when tagged at least once per minShare of its
// lemma's tags.
const minShare = 10

// entry is what one stem relates to: each related stem and its strongest class.
type entry map[string]int

// derive builds the table: stem → related stems.
func derive(wn *wordnet, opt options) map[string]entry {
	table := map[string]entry{}
	lemmas := map[string]bool{}
	for _, pos := range []byte{'n', 'v'} {
		for l := range wn.senses[pos] {
			lemmas[l] = true
		}
	}
	for _, lemma := range slices.Sorted(maps.Keys(lemmas)) {
		key, ok := term(lemma)
		if !ok {
			continue
		}
		e := table[key]
		if e == nil {
			e = entry{}
			table[key] = e
		}
		var nouns, verbs []sense
		if strings.ContainsRune(opt.pos, 'n') {
			nouns = wn.senses['n'][lemma]
		}
		if strings.ContainsRune(opt.pos, 'v') {
			verbs = wn.senses['v'][lemma]
		}
		for _, s := range kept(nouns, verbs, opt.senses) {
			wn.relate(e, key, lemma, s.synset)
		}
	}
	for k, e := range table {
		if len(e) == 0 {
			delete(table, k)
		}
	}
	return table
}

// kept are the senses of a lemma the table reads, over its noun and verb senses together, so
// that the noun "open" (the outdoors), far rarer than the verb, is left out: the most tagged
// sense, then among the maxSenses most tagged those tagged at least once per minShare of the
// lemma's tags. An untagged lemma keeps the first sense of each part of speech.
func kept(nouns, verbs []sense, maxSenses int) []sense {
	all := slices.Concat(nouns, verbs)
	total := 0
	for _, s := range all {
		total += s.tags
	}
	if total == 0 {
		var out []sense
		for _, ss := range [][]sense{nouns, verbs} {
			if len(ss) > 0 {
				out = append(out, ss[0])
			}
		}
		return out
	}
	slices.SortStableFunc(all, func(a, b sense) int { return b.tags - a.tags })
	if len(all) == 0 {
		return nil
	}
	out := all[:1]
	for _, s := range all[1:min(len(all), maxSenses)] {
		if s.tags*minShare >= total {
			out = append(out, s)
		}
	}
	return out
}

// relate adds to e the words related to lemma in synset id.
func (wn *wordnet) relate(e entry, key, lemma string, id synsetID) {
	s := wn.synsets[id]
	if s == nil {
		return
	}
	add := func(w string, class int) {
		t, ok := term(w)
		if !ok || t == key {
			return
		}
		if c, seen := e[t]; !seen || class < c {
			e[t] = class
		}
	}
	addAll := func(id synsetID, class int) {
		if t := wn.synsets[id]; t != nil {
			for _, w := range t.words {
				add(w, class)
			}
		}
	}
	own := slices.Index(s.words, lemma) + 1
	for _, w := range s.words {
		add(w, classSame)
	}
	for _, p := range s.ptrs {
		switch {
		case p.symbol == "+" && (p.source == 0 || p.source == own):
			if t := wn.synsets[p.target]; t != nil && p.toWord >= 1 && p.toWord <= len(t.words) {
				add(t.words[p.toWord-1], classSame)
			}
		case id.pos == 'v' && (p.symbol == "@" || p.symbol == "*"):
			addAll(p.target, classBroader)
			if p.symbol == "@" {
				wn.hypernyms(p.target, func(h synsetID) { addAll(h, classBroader) })
			}
		case id.pos == 'n' && p.symbol == "@":
			addAll(p.target, classKind)
		}
	}
}

// hypernyms calls fn with the hypernyms of synset id.
func (wn *wordnet) hypernyms(id synsetID, fn func(synsetID)) {
	if s := wn.synsets[id]; s != nil {
		for _, p := range s.ptrs {
			if p.symbol == "@" {
				fn(p.target)
			}
		}
	}
}

// term is a lemma as the ranker indexes it, if it is one word of letters that the ranker keeps.
func term(lemma string) (string, bool) {
	for _, r := range lemma {
		if r < 'a' || r > 'z' {
			return "", false
		}
	}
	ts := toolsearch.Tokens(lemma)
	if len(ts) != 1 {
		return "", false
	}
	return ts[0], true
}

// encode writes the table: the licence as '#' lines, then one line per stem, sorted, "stem" and
// a tab-separated column per class (same, broader, kind; trailing empty ones left out),
// each a space-separated sorted list of stems.
func encode(licence string, table map[string]entry) []byte {
	var b bytes.Buffer
	b.WriteString("# Derived from WordNet 3.1 by internal/tools/wordnet; see its doc comment.\n")
	for _, l := range strings.Split(strings.TrimRight(licence, "\n"), "\n") {
		b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
	}
	for _, k := range slices.Sorted(maps.Keys(table)) {
		var cols [numClasses][]string
		for t, c := range table[k] {
			cols[c] = append(cols[c], t)
		}
		n := numClasses
		for n > 0 && len(cols[n-1]) == 0 {
			n--
		}
		b.WriteString(k)
		for _, col := range cols[:n] {
			slices.Sort(col)
			b.WriteByte('\t')
			b.WriteString(strings.Join(col, " "))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// readLicence is WordNet's licence as the head of data.verb states it (the lines before the first
// synset, less their line numbers).
func readLicence(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, "data.verb"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	var out strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() && strings.HasPrefix(sc.Text(), "  ") {
		_, text, _ := strings.Cut(strings.TrimLeft(sc.Text(), " "), " ")
		out.WriteString(strings.TrimRight(text, " ") + "\n")
	}
	return out.String(), sc.Err()
}
