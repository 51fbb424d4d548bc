package toolsearch

import (
	"math"
	"strings"
)

// Dense rankings: an operator-configured embeddings endpoint (docs/search.md § An embeddings
// endpoint) gives a vector per tool and one per query; SearchFused fuses the cosine ranking they
// make with BM25F's, over the same view of the catalog. The vectors come from outside the package
// (internal/embeddings); this file only ranks with them.

// FusionMethod is how SearchFused combines the lexical and the dense ranking.
type FusionMethod uint8

const (
	// FuseRRF is reciprocal-rank fusion (Cormack, Clarke and Büttcher, 2009): a tool scores
	// 1/(K+rank) in each list that holds it, the dense list's times Weight. It reads ranks only,
	// so neither list's scale matters: the usual default of hybrid search.
	FuseRRF FusionMethod = iota
	// FuseBlend adds Weight times the cosine, scaled from the lowest to the highest in the view,
	// to the lexical score divided by the best in the view.
	FuseBlend
)

// ParseFusion is the method a configuration names: "blend", or reciprocal-rank fusion.
func ParseFusion(name string) FusionMethod {
	if name == "blend" {
		return FuseBlend
	}
	return FuseRRF
}

// DefaultRRFK is reciprocal-rank fusion's K, the value its authors found robust.
const DefaultRRFK = 60

// Dense is what SearchFused needs of a dense ranking: the query's vector and each tool's, by
// index in the catalog (nil: that tool has none, and only its lexical rank counts). Tools'
// vectors are of length 1 (internal/embeddings scales what the endpoint answers), so a tool's
// cosine with the query is one dot product; the query's length is divided out once. A tool's
// vector of other dimensions than the query's is not used.
type Dense struct {
	Query  []float32
	Tools  [][]float32
	Method FusionMethod
	// Weight is the dense ranking's weight against the lexical one's (1: equal).
	Weight float64
	// K is reciprocal-rank fusion's K; 0 means DefaultRRFK.
	K float64
}

// EmbedText is the text a tool is embedded from: the words of its namespaced name, its title,
// its description's first sentence and its parameter names. Of the texts measured with a
// sentence encoder (docs/search.md § A sentence encoder) this one ranked best; the rest of a
// description (usage notes, caveats) says less about which task a tool fits. It reads the tool's
// own text only, so a tool's vector never depends on another tool.
func EmbedText(t Tool) string {
	var b strings.Builder
	b.WriteString(strings.Join(words(t.Name), " "))
	if t.Title != "" {
		b.WriteString(". ")
		b.WriteString(t.Title)
	}
	if lead, _ := leadSentence(truncate(t.Description, maxDescribeBytes)); lead != "" {
		b.WriteString(". ")
		b.WriteString(lead)
	}
	if len(t.Params) > 0 {
		b.WriteString(". Parameters:")
		for _, p := range t.Params {
			b.WriteByte(' ')
			b.WriteString(strings.Join(words(p.Name), " "))
		}
	}
	return b.String()
}

// SearchFused is Search with a dense ranking fused into BM25F's, over exactly the same view: the
// tools allow accepts (called once per tool), near-duplicates sharing one slot. A tool allow
// refuses has no rank in either list and no part in the blend's scaling, so it changes nothing.
// The dense list ranks every tool of the view that has a vector, so a task that shares no word
// with its tool can still find it.
func (ix *BM25) SearchFused(query string, limit int, allow func(i int) bool, d Dense) []Hit {
	if limit <= 0 || len(ix.names) == 0 {
		return nil
	}
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	v := ix.newView(allow, sc)
	if v.n == 0 {
		return nil
	}
	var acc []acc
	if q := readQuery(query); len(q.terms) > 0 {
		acc = ix.lexical(q, &v, sc)
	} else {
		acc = sc.accs
		clear(acc)
	}
	cos := ix.cosines(&v, d)
	var fused []float64
	if d.Method == FuseBlend {
		fused = blend(acc, cos, d.Weight)
	} else {
		fused = ix.rrf(acc, cos, d)
	}
	top := topHits{ix: ix, limit: limit}
	for i, s := range fused {
		if s > 0 {
			top.offer(Hit{Index: i, Score: s})
		}
	}
	return v.withSimilar(top.sorted())
}

// cosines is each ranked tool's cosine with the query (its vector being of length 1), NaN for a
// tool the view does not rank or that has no vector of the query's dimensions.
func (ix *BM25) cosines(v *view, d Dense) []float64 {
	cos := make([]float64, len(ix.names))
	qn := 0.0
	for _, x := range d.Query {
		qn += float64(x) * float64(x)
	}
	qn = math.Sqrt(qn)
	for i := range cos {
		cos[i] = math.NaN()
		if v.has(int32(i)) && i < len(d.Tools) && len(d.Tools[i]) == len(d.Query) && qn > 0 {
			cos[i] = float64(dot32(d.Query, d.Tools[i])) / qn
		}
	}
	return cos
}

// rrf is reciprocal-rank fusion of the lexical scores (tools scoring 0 are not in that list) and
// the cosines (NaN: not in that list). Ranks are 1-based; ties within a list take the order of
// the tools' names, as the answer does.
func (ix *BM25) rrf(acc []acc, cos []float64, d Dense) []float64 {
	k := d.K
	if k <= 0 {
		k = DefaultRRFK
	}
	out := make([]float64, len(acc))
	lex := make([]float64, len(acc))
	for i := range acc {
		lex[i] = acc[i].sum
		if lex[i] <= 0 {
			lex[i] = math.NaN()
		}
	}
	for rank, i := range ix.order(lex) {
		out[i] += 1 / (k + float64(rank+1))
	}
	for rank, i := range ix.order(cos) {
		out[i] += d.Weight / (k + float64(rank+1))
	}
	return out
}

// order is the indexes of the scores that are not NaN, best first, ties by name.
func (ix *BM25) order(scores []float64) []int {
	var idx []int
	for i, s := range scores {
		if !math.IsNaN(s) {
			idx = append(idx, i)
		}
	}
	t := topHits{ix: ix, limit: len(idx)}
	for _, i := range idx {
		t.offer(Hit{Index: i, Score: scores[i]})
	}
	for n, h := range t.sorted() {
		idx[n] = h.Index
	}
	return idx
}

// blend is the lexical score divided by the best in the view plus weight times the cosine
// scaled from the view's lowest to its highest (a view whose cosines are all equal adds
// nothing: they rank nothing).
func blend(acc []acc, cos []float64, weight float64) []float64 {
	best, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	for i := range acc {
		best = max(best, acc[i].sum)
		if !math.IsNaN(cos[i]) {
			lo, hi = min(lo, cos[i]), max(hi, cos[i])
		}
	}
	out := make([]float64, len(acc))
	for i := range acc {
		if best > 0 {
			out[i] = acc[i].sum / best
		}
		if !math.IsNaN(cos[i]) && hi > lo {
			out[i] += weight * (cos[i] - lo) / (hi - lo)
		}
	}
	return out
}
