package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/mcp-gateway/gateway/internal/toolsearch"
)

// source is what the generator reads of the package: its words, most frequent first, and each
// word's vector as the package writes it (the vector, then its length, then the word's index).
type source struct {
	dims    int
	words   []string
	vectors map[string]json.RawMessage
}

func readPackage(path string) (*source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var doc struct {
		Dimensions int                        `json:"dimensions"`
		Words      []string                   `json:"words"`
		Vectors    map[string]json.RawMessage `json:"vectors"`
	}
	if err := json.NewDecoder(f).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Dimensions <= 0 || len(doc.Words) == 0 {
		return nil, fmt.Errorf("%s: no dimensions or no words: not the package's vectors file", path)
	}
	return &source{dims: doc.Dimensions, words: doc.Words, vectors: doc.Vectors}, nil
}

// selected are the words kept, in the package's order, and their vectors.
type selected struct {
	words []string
	vecs  [][]float64
}

// selectWords keeps, of the first n lower-case alphabetic words, the most frequent form of each
// stem: the ranker looks words up by stem, so other forms would never be read.
func selectWords(src *source, n int) (*selected, error) {
	sel := &selected{}
	seen := map[string]bool{}
	for _, w := range src.words {
		if n == 0 {
			break
		}
		if !alphabetic(w) {
			continue
		}
		n--
		stem := toolsearch.Stem(w)
		if seen[stem] {
			continue
		}
		seen[stem] = true
		var v []float64
		if err := json.Unmarshal(src.vectors[w], &v); err != nil || len(v) < src.dims {
			return nil, fmt.Errorf("the vector of %q: want %d numbers (%v)", w, src.dims, err)
		}
		sel.words = append(sel.words, w)
		sel.vecs = append(sel.vecs, v[:src.dims])
	}
	return sel, nil
}

func alphabetic(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return len(w) >= 2
}

// table is the derived table: words and their quantised unit vectors.
type table struct {
	dims  int
	words []string
	vecs  [][]int8
}

// quantise stores v's direction in signed bytes, its largest component at ±127.
func quantise(v []float64) []int8 {
	norm := 0.0
	for _, x := range v {
		norm = max(norm, math.Abs(x))
	}
	q := make([]int8, len(v))
	if norm == 0 {
		return q
	}
	for i, x := range v {
		q[i] = int8(math.Round(x / norm * 127))
	}
	return q
}

// encode writes the table in the format toolsearch reads (toolsearch.EncodeWordVectors).
func (t *table) encode() []byte { return toolsearch.EncodeWordVectors(t.words, t.vecs, t.dims) }
