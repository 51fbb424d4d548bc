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
func (ix *BM25) newView(allow func(i int) bool) view {
	var v view
	if allow != nil || len(ix.withDups) > 0 {
		v.ranked = make([]bool, len(ix.fieldLen))
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
	words := queryTerms(query)
	if len(words) == 0 {
		return nil
	}
	v := ix.newView(allow)
	if v.n == 0 {
		return nil
	}
	scores, matched := ix.score(words, &v)
	named := ix.namedBackends(words)
	hits := make([]Hit, 0, 16)
	for i, s := range scores {
		if s > 0 {
			s *= math.Pow(float64(matched[i])/float64(len(words)), coordPower)
			if named[ix.backend[i]] {
				s *= backendBoost
			}
			hits = append(hits, Hit{Index: i, Score: s})
		}
	}
	ix.sortHits(hits)
	if len(hits) > limit {
		hits = hits[:limit]
	}
	for i := range hits {
		hits[i].Similar = v.similar[int32(hits[i].Index)]
	}
	return hits
}

// score sums, per visible tool, the BM25 weight of its best match for each query word, and
// counts the words it matched.
func (ix *BM25) score(words []string, v *view) ([]float64, []uint8) {
	n := len(ix.names)
	scores := make([]float64, n)
	matched := make([]uint8, n)
	best := make([]float64, n)
	var touched []int32
	for _, w := range words {
		touched = touched[:0]
		for _, e := range ix.expand(w) {
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
				if best[p.doc] == 0 {
					touched = append(touched, p.doc)
				}
				best[p.doc] = max(best[p.doc], s)
			}
		}
		for _, d := range touched {
			scores[d] += best[d]
			matched[d] = min(matched[d]+1, math.MaxUint8)
			best[d] = 0
		}
	}
	return scores, matched
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

// sortHits orders hits best first, ties by name, so every replica ranks alike.
func (ix *BM25) sortHits(hits []Hit) {
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(ix.names[a.Index], ix.names[b.Index])
	})
}

// expansion is one indexed term a query word looks for, and its weight.
type expansion struct {
	term   string
	weight float64
}

// expand lists what word looks for, in a fixed order: itself, its synonyms, the longer indexed
// words it begins.
func (ix *BM25) expand(w string) []expansion {
	out := []expansion{{w, 1}}
	for _, s := range synonyms[w] {
		out = append(out, expansion{s, synonymWeight})
	}
	if len(w) >= minPrefix {
		i := sort.SearchStrings(ix.vocab, w)
		for ; i < len(ix.vocab) && strings.HasPrefix(ix.vocab[i], w); i++ {
			if ix.vocab[i] != w {
				out = append(out, expansion{ix.vocab[i], prefixWeight})
			}
		}
	}
	return out
}

// Weights of the query side.
const (
	// backendBoost scales the tools of a backend the query names ("in Notion", "my mongo
	// collection"): a user who names the service has chosen among the tools that do the task.
	backendBoost = 2.0
	// prefixWeight is the weight of an indexed word that a query word begins.
	prefixWeight = 0.5
	// coordPower is how strongly the share of query words a tool matches scales its score.
	coordPower = 1.0
)

// minPrefix is the shortest query word matched as a prefix: shorter ones begin too many words.
const minPrefix = 4

// namedBackends are the backends one of whose name's words a query word is, begins (four
// letters or more) or is a synonym of.
func (ix *BM25) namedBackends(words []string) map[int32]bool {
	var named map[int32]bool
	for _, w := range words {
		for _, e := range ix.expand(w) {
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
