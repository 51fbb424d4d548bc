package toolsearch

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// view is the part of the catalog one search ranks over: the tools the caller may see, less the
// near-duplicates that share a slot with another (dupes.go), how many they are and their mean
// length. BM25's statistics are taken over it, so a word that only hidden tools hold weighs
// nothing and a hidden tool's words change no visible tool's score.
type view struct {
	ranked  []bool // nil: every tool
	n       int
	avgLen  [numFields]float64
	similar map[int32][]int // a ranked tool → the near-duplicates that share its slot
}

// newView calls allow once per tool. Its cost is one pass over the catalog, the same as a
// filtered tools/list, and one over the tools that have near-duplicates; no index is rebuilt.
func (ix *BM25) newView(allow func(i int) bool, sc *scratch) view {
	var v view
	if allow != nil || len(ix.withDups) > 0 {
		v.ranked = sc.ranked
		for i := range v.ranked {
			v.ranked[i] = allow == nil || allow(i)
		}
		ix.groups(&v)
	}
	var total [numFields]float64
	for i := range ix.fieldLen {
		if v.ranked == nil || v.ranked[i] {
			v.n++
			for f, l := range ix.fieldLen[i] {
				total[f] += float64(l)
			}
		}
	}
	for f := range total {
		v.avgLen[f] = max(total[f]/float64(max(v.n, 1)), 1)
	}
	return v
}

func (v *view) has(doc int32) bool { return v.ranked == nil || v.ranked[doc] }

// df is how many ranked tools hold the term of these postings.
func (v *view) df(ps []posting) int {
	if v.ranked == nil {
		return len(ps)
	}
	n := 0
	for _, p := range ps {
		if v.ranked[p.doc] {
			n++
		}
	}
	return n
}

// Search implements Ranker. Each word of the query scores a tool by its best match: the word
// itself, a synonym (synonymWeight) or, for a word of four letters or more, a longer indexed word
// it begins (prefixWeight: "mongo" meets "mongodb"). A tool's score is the sum over the query's
// words times the share of them it matches (Lucene's coordination factor), so a tool that covers
// "create" and "folder" outranks one that only shares a rare word with the query. Near-duplicates
// from other backends share one slot (dupes.go).
func (ix *BM25) Search(query string, limit int, allow func(i int) bool) []Hit {
	if limit <= 0 || len(ix.names) == 0 {
		return nil
	}
	q := readQuery(query)
	if len(q.terms) == 0 {
		return nil
	}
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	v := ix.newView(allow, sc)
	if v.n == 0 {
		return nil
	}
	acc := ix.lexical(q, &v, sc)
	top := topHits{ix: ix, limit: limit}
	for i := range acc {
		if s := acc[i].sum; s > 0 {
			top.offer(Hit{Index: i, Score: s})
		}
	}
	return v.withSimilar(top.sorted())
}

// withSimilar sets each hit's near-duplicates that share its slot in the view.
func (v *view) withSimilar(hits []Hit) []Hit {
	for i := range hits {
		hits[i].Similar = v.similar[int32(hits[i].Index)]
	}
	return hits
}

// lexical scores every tool of the view v against the query q (which has terms) into the
// scratch's accumulators: acc[i].sum is tool i's final score, 0 for a tool it does not match or
// that the view does not rank.
func (ix *BM25) lexical(q parsed, v *view, sc *scratch) []acc {
	words := q.terms
	exps := make([][]expansion, len(words))
	for i, w := range words {
		exps[i] = ix.expand(w, v)
	}
	for _, w := range q.redo {
		if again := redone(w); again != "" && v.df(ix.postings[w]) == 0 {
			q.acts |= actionWords[again] | actUpdate // reopen, retitle: a change to a thing
		}
	}
	acc := ix.score(exps, v, sc.accs)
	named := ix.namedBackends(exps, v)
	coord := make([]float64, len(words)+1) // per number of query words matched: one Pow each
	for m := range coord {
		coord[m] = math.Pow(float64(m)/float64(len(words)), coordPower)
	}
	for i := range acc {
		acc[i].sum *= coord[min(int(acc[i].matched), len(words))]
	}
	if ix.vec != nil {
		ix.vec.fuse(acc, v, words)
	}
	for i := range acc {
		if acc[i].sum > 0 {
			acc[i].sum *= actionFactor(q.acts, ix.actions[i])
			if named[ix.backend[i]] {
				acc[i].sum *= backendBoost
			}
		}
	}
	return acc
}

// acc is one tool's running score during a search.
type acc struct {
	sum, best float64 // the query words so far; the current word's best match
	matched   uint8   // query words matched
}

// score sums, per ranked tool, the BM25 weight of its best match for each query word, and
// counts the words it matched, into accs (one per tool, cleared here).
func (ix *BM25) score(exps [][]expansion, v *view, accs []acc) []acc {
	clear(accs)
	var touched []int32
	for _, word := range exps {
		touched = touched[:0]
		for _, e := range word {
			ps := ix.postings[e.term]
			df := v.df(ps)
			if df == 0 {
				continue
			}
			idf := math.Log(1 + (float64(v.n)-float64(df)+0.5)/(float64(df)+0.5))
			for _, p := range ps {
				if !v.has(p.doc) {
					continue
				}
				tf := ix.fieldTF(&p, v)
				s := e.weight * idf * tf * (bm25K1 + 1) / (tf + bm25K1)
				a := &accs[p.doc]
				if a.best == 0 {
					touched = append(touched, p.doc)
				}
				a.best = max(a.best, s)
			}
		}
		for _, d := range touched {
			a := &accs[d]
			a.sum += a.best
			a.matched = min(a.matched+1, math.MaxUint8)
			a.best = 0
		}
	}
	return accs
}

// fieldTF is BM25F's pseudo-frequency of a term in a tool: each field's count, weighted and
// normalised by that field's length in the tool against its mean in the view.
func (ix *BM25) fieldTF(p *posting, v *view) float64 {
	tf := 0.0
	lens := &ix.fieldLen[p.doc]
	for f, c := range p.tf {
		if c > 0 {
			tf += fieldWeight[f] * float64(c) / (1 - fieldB[f] + fieldB[f]*float64(lens[f])/v.avgLen[f])
		}
	}
	return tf
}

// topHits keeps the best limit hits offered, in a heap whose root is the worst kept, so a
// search sorts limit hits rather than every tool a common word matched.
type topHits struct {
	ix    *BM25
	limit int
	h     []Hit
}

// worse orders hits best first: higher score, then name, so every replica ranks alike.
func (t *topHits) worse(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return t.ix.names[a.Index] > t.ix.names[b.Index]
}

func (t *topHits) offer(h Hit) {
	if len(t.h) < t.limit {
		t.h = append(t.h, h)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !t.worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !t.worse(t.h[0], h) {
		return
	}
	t.h[0] = h
	for i := 0; ; {
		w, l, r := i, 2*i+1, 2*i+2
		if l < len(t.h) && t.worse(t.h[l], t.h[w]) {
			w = l
		}
		if r < len(t.h) && t.worse(t.h[r], t.h[w]) {
			w = r
		}
		if w == i {
			return
		}
		t.h[i], t.h[w] = t.h[w], t.h[i]
		i = w
	}
}

// sorted returns the hits kept, best first.
func (t *topHits) sorted() []Hit {
	slices.SortFunc(t.h, func(a, b Hit) int {
		switch {
		case t.worse(b, a):
			return -1
		case t.worse(a, b):
			return 1
		}
		return 0
	})
	return t.h
}

// expansion is one indexed term a query word looks for, and its weight.
type expansion struct {
	term      string
	weight    float64
	prefix    bool // a longer word the query word begins
	thesaurus bool // a word WordNet relates to it
}

// expand lists what word looks for, in a fixed order: itself, its synonyms, the longer indexed
// words it begins.
func (ix *BM25) expand(w string, v *view) []expansion {
	out := make([]expansion, 1, 1+len(synonyms[w])+4)
	out[0] = expansion{term: w, weight: 1}
	for _, s := range synonyms[w] {
		out = append(out, expansion{term: s.term, weight: s.weight})
	}
	if again := redone(w); again != "" && v.df(ix.postings[w]) == 0 { // no tool's word: re- + a verb
		out = append(out, expansion{term: again, weight: redoWeight})
	}
	if len(w) >= minPrefix {
		i := sort.SearchStrings(ix.vocab, w)
		for ; i < len(ix.vocab) && strings.HasPrefix(ix.vocab[i], w); i++ {
			if ix.vocab[i] != w {
				out = append(out, expansion{term: ix.vocab[i], weight: prefixWeight, prefix: true})
			}
		}
	}
	if ix.thesaurus != nil {
		out = ix.addThesaurus(out, w, v)
	}
	if ix.vec != nil && v.df(ix.postings[w]) == 0 {
		out = ix.vec.near(out, w)
	}
	return out
}

// Weights of the query side.
const (
	// backendBoost scales the tools of a backend the query names ("in Notion", "my mongo
	// collection"): a user who names the service has chosen among the tools that do the task.
	backendBoost = 1.5
	// redoWeight is the weight of the verb a word made with re- does again (retitle: title).
	redoWeight = 0.7
	// prefixWeight is the weight of an indexed word that a query word begins.
	prefixWeight = 0.5
	// coordPower is how strongly the share of query words a tool matches scales its score: less
	// than linearly, so a tool that matches the task's rare words outranks one matching more
	// common ones.
	coordPower = 0.75
)

// minPrefix is the shortest query word matched as a prefix: shorter ones begin too many words.
const minPrefix = 4

// namedBackends are the backends one of whose name's words a query word is, is a synonym of, or
// begins (four letters or more: "mongo", "circle") when no tool the caller sees holds the query
// word itself: "context" is a word of tools ("switch the kube context"), not a name of the
// context7 backend.
func (ix *BM25) namedBackends(exps [][]expansion, v *view) map[int32]bool {
	var named map[int32]bool
	for _, word := range exps {
		ordinary := v.df(ix.postings[word[0].term]) > 0
		for _, e := range word {
			if e.prefix && ordinary || e.thesaurus {
				continue
			}
			for _, b := range ix.backendWords[e.term] {
				if named == nil {
					named = map[int32]bool{}
				}
				named[b] = true
			}
		}
	}
	return named
}

// scratch is one search's buffers of one entry per tool.
type scratch struct {
	accs   []acc
	ranked []bool
}

// getScratch takes a search's buffers from the pool, so a search does not allocate per tool.
func (ix *BM25) getScratch() *scratch {
	if sc, ok := ix.scratch.Get().(*scratch); ok {
		return sc
	}
	return &scratch{accs: make([]acc, len(ix.names)), ranked: make([]bool, len(ix.names))}
}
