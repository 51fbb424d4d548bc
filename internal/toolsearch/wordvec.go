package toolsearch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Word vectors: an experiment, off in the gateway (docs/search.md § Word vectors). A table of
// GloVe's vectors of common English words (made by internal/tools/wordvec, not in the repository)
// says which words mean nearly the same without a table written by hand; the ranker can read it in
// two ways, a query word no tool holds matching the tools' words near it, and a score from the
// vectors of the query and of each tool's text added to BM25's. Neither ranked better than words
// alone on the evaluation's task sets, so no table is shipped and NewBM25 uses none; tests build
// an index with one (newBM25) to measure them again.

// wordVectors is a decoded table: a stem's row, and each row's vector in signed bytes, rows in
// order of the words' frequency in English.
type wordVectors struct {
	dims int
	row  map[string]int32
	vecs []byte // int8, dims per row
}

// EncodeWordVectors writes a word-vector table, words most frequent first and each word's vector
// of dims signed bytes, in the format decodeWordVectors reads: "wordvec1", the number of words and
// of dimensions (uint32, little-endian), the words each ended by a newline, then one signed byte
// per dimension per word. It is here, next to its reader, so that internal/tools/wordvec, which
// makes the table, and the tests write the format the ranker reads.
func EncodeWordVectors(words []string, vecs [][]int8, dims int) []byte {
	out := []byte("wordvec1")
	out = binary.LittleEndian.AppendUint32(out, uint32(len(words)))
	out = binary.LittleEndian.AppendUint32(out, uint32(dims))
	for _, w := range words {
		out = append(out, w...)
		out = append(out, '\n')
	}
	for _, v := range vecs {
		for _, x := range v {
			out = append(out, byte(x))
		}
	}
	return out
}

// decodeWordVectors reads the format EncodeWordVectors writes. Words are looked up by their stem,
// the most frequent first.
func decodeWordVectors(b []byte) (*wordVectors, error) {
	if len(b) < 16 || string(b[:8]) != "wordvec1" {
		return nil, errors.New("toolsearch: not a word-vector table (no wordvec1 header)")
	}
	n := int(binary.LittleEndian.Uint32(b[8:]))
	dims := int(binary.LittleEndian.Uint32(b[12:]))
	if dims == 0 || dims > 1024 {
		return nil, fmt.Errorf("toolsearch: a word-vector table of %d dimensions", dims)
	}
	rest := b[16:]
	wv := &wordVectors{dims: dims, row: make(map[string]int32, min(n, len(rest)))}
	for i := range n {
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			return nil, fmt.Errorf("toolsearch: the word-vector table ends after %d of %d words", i, n)
		}
		if stem := Stem(string(rest[:end])); !wv.has(stem) {
			wv.row[stem] = int32(i)
		}
		rest = rest[end+1:]
	}
	if len(rest) != n*dims {
		return nil, fmt.Errorf("toolsearch: the word-vector table holds %d bytes of vectors, want %d", len(rest), n*dims)
	}
	wv.vecs = rest
	return wv, nil
}

func (wv *wordVectors) has(stem string) bool { _, ok := wv.row[stem]; return ok }

// sifRank is the frequency rank at which a word weighs half in a text's vector: words much more
// common than that (get, new, use) say little about which tool a text is about. The weight
// r/(r+sifRank) is the "smooth inverse frequency" of Arora, Liang and Ma (2017), with Zipf's law
// standing in for the frequency.
const sifRank = 1000

// addTo adds the unit vector of stem, times w and its rarity, to sum; it reports whether the
// table holds stem.
func (wv *wordVectors) addTo(sum []float32, stem string, w float64) bool {
	r, ok := wv.row[stem]
	if !ok {
		return false
	}
	return wv.add(sum, r, w*float64(r)/(float64(r)+sifRank))
}

// add adds row r's vector, scaled to length w, to sum; it reports whether the vector is not zero.
func (wv *wordVectors) add(sum []float32, r int32, w float64) bool {
	v := wv.vecs[int(r)*wv.dims : int(r+1)*wv.dims]
	norm := 0.0
	for _, x := range v {
		norm += float64(int8(x)) * float64(int8(x))
	}
	if norm == 0 {
		return false
	}
	scale := float32(w / math.Sqrt(norm))
	for i, x := range v {
		sum[i] += scale * float32(int8(x))
	}
	return true
}

// unit is stem's unit vector, or nil when the table does not hold it.
func (wv *wordVectors) unit(stem string) []float32 {
	r, ok := wv.row[stem]
	v := make([]float32, wv.dims)
	if !ok || !wv.add(v, r, 1) {
		return nil
	}
	return v
}

// normalize scales v to unit length (a zero vector stays zero).
func normalize(v []float32) {
	n := 0.0
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	s := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= s
	}
}

func dot32(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// vectorRanking is how an index uses word vectors. The zero weights leave a way off.
type vectorRanking struct {
	wv *wordVectors
	// nearFloor and nearWeight: a query word no ranked tool holds also looks for every indexed
	// word whose vector's cosine with its own is at least nearFloor, at nearWeight times that
	// cosine (a soft match inside BM25).
	nearFloor, nearWeight float64
	// denseWeight: a tool's score adds denseWeight times the cosine (when positive) of the
	// query's vector with the tool's, BM25's score being first divided by the best in the view;
	// with denseGated, times the share of the query's words that no tool matches, so the vectors
	// weigh only when words leave the task unmatched.
	denseWeight float64
	denseGated  bool
}

// vectorIndex is what an index keeps for word vectors, per catalog version: each tool's vector,
// and the indexed terms the table holds with their unit vectors.
type vectorIndex struct {
	vectorRanking
	tools    []float32 // wv.dims per tool
	terms    []string
	termVecs []float32 // wv.dims per term
}

// denseFieldWeight weighs a tool's name, title and lead sentence in its vector as BM25F weighs
// those fields.
var denseFieldWeight = [...]float64{fieldWeight[fieldName], fieldWeight[fieldTitle], fieldWeight[fieldLead]}

// newVectorIndex makes room for n tools' vectors (nil if vr uses no table).
func newVectorIndex(vr *vectorRanking, n int) *vectorIndex {
	if vr == nil || vr.wv == nil {
		return nil
	}
	return &vectorIndex{vectorRanking: *vr, tools: make([]float32, n*vr.wv.dims)}
}

// embed sets tool i's vector: the vectors of the words of its name, title and lead sentence,
// weighted by field and by rarity in English, summed and normalised. It reads the tool's own text
// only, so a tool's vector never depends on another tool (which a caller may not see).
func (vi *vectorIndex) embed(i int, name, title, lead []string) {
	d := vi.wv.dims
	v := vi.tools[i*d : (i+1)*d]
	for f, terms := range [...][]string{name, title, lead} {
		for _, t := range terms {
			vi.wv.addTo(v, t, denseFieldWeight[f])
		}
	}
	normalize(v)
}

// indexTerms keeps the unit vectors of the indexed terms the table holds, in vocabulary order.
func (vi *vectorIndex) indexTerms(vocab []string) {
	for _, t := range vocab {
		if u := vi.wv.unit(t); u != nil {
			vi.terms = append(vi.terms, t)
			vi.termVecs = append(vi.termVecs, u...)
		}
	}
}

// near appends to out the indexed terms near w. Every term at or above the floor is listed, not
// the nearest few: a term only hidden tools hold then matches nothing, where a cap would let it
// take the place of a visible tool's term.
func (vi *vectorIndex) near(out []expansion, w string) []expansion {
	if vi.nearWeight == 0 {
		return out
	}
	u := vi.wv.unit(w)
	if u == nil {
		return out
	}
	d := vi.wv.dims
	for k, t := range vi.terms {
		if sim := float64(dot32(u, vi.termVecs[k*d:(k+1)*d])); sim >= vi.nearFloor && t != w {
			out = append(out, expansion{term: t, weight: vi.nearWeight * sim})
		}
	}
	return out
}

// query is the vector of a query's words, or nil when the dense score is off or none has one.
func (vi *vectorIndex) query(words []string) []float32 {
	if vi.denseWeight == 0 {
		return nil
	}
	qv := make([]float32, vi.wv.dims)
	found := false
	for _, w := range words {
		found = vi.wv.addTo(qv, w, 1) || found
	}
	if !found {
		return nil
	}
	normalize(qv)
	return qv
}

// cosine is tool i's cosine with the query vector qv.
func (vi *vectorIndex) cosine(qv []float32, i int) float64 {
	d := vi.wv.dims
	return float64(dot32(qv, vi.tools[i*d:(i+1)*d]))
}

// fuse adds, per ranked tool, the dense score to its BM25 score (already scaled by the share of
// query words matched) divided by the best in the view. Both are taken over the view only.
func (vi *vectorIndex) fuse(accs []acc, v *view, words []string) {
	qv := vi.query(words)
	if qv == nil {
		return
	}
	best, most := 0.0, 0
	for i := range accs {
		best = max(best, accs[i].sum)
		most = max(most, int(accs[i].matched))
	}
	w := vi.denseWeight
	if vi.denseGated {
		w *= 1 - float64(min(most, len(words)))/float64(len(words))
	}
	for i := range accs {
		if !v.has(int32(i)) {
			continue
		}
		if best > 0 {
			accs[i].sum /= best
		}
		accs[i].sum += w * max(0, vi.cosine(qv, i))
	}
}
