package toolsearch

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/racetest"
)

// TestDecodeWordVectors: a table is read by stem, its most frequent form first, and a table that
// is not whole is an error, never a partial table.
func TestDecodeWordVectors(t *testing.T) {
	good := EncodeWordVectors([]string{"file", "files", "folder"}, [][]int8{{1, 0}, {0, 1}, {3, 4}}, 2)
	wv, err := decodeWordVectors(good)
	if err != nil {
		t.Fatal(err)
	}
	if wv.row["file"] != 0 || wv.row["folder"] != 2 || len(wv.row) != 2 {
		t.Errorf("rows %v: want file (its first form) at 0 and folder at 2", wv.row)
	}
	if u := wv.unit("folder"); len(u) != 2 || u[0] != 0.6 || u[1] != 0.8 {
		t.Errorf("unit(folder) = %v, want [0.6 0.8]", u)
	}
	if wv.unit("directory") != nil {
		t.Error("a word the table does not hold has a vector")
	}
	for name, b := range map[string][]byte{
		"empty":          nil,
		"no header":      append([]byte("wordvec2"), good[8:]...),
		"too few words":  EncodeWordVectors([]string{"file"}, nil, 2)[:16+len("fi")],
		"short vectors":  good[:len(good)-1],
		"long vectors":   append(slices.Clone(good), 0),
		"zero dimension": EncodeWordVectors([]string{"file"}, [][]int8{{}}, 0),
	} {
		if _, err := decodeWordVectors(b); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}

// randomTable is a table of random vectors for every term of the captured catalog's index and
// some words no tool holds: vectors that rank nothing well, to check what holds whatever the
// vectors say.
func randomTable(tb testing.TB) *wordVectors {
	tb.Helper()
	vocab := slices.Clone(NewBM25(toolsOf(loadCatalog(tb))).vocab)
	vocab = append(vocab, "coworker", "trip", "picture", "airport")
	rng := rand.New(rand.NewPCG(3, 4))
	rng.Shuffle(len(vocab), func(i, j int) { vocab[i], vocab[j] = vocab[j], vocab[i] })
	const dims = 8
	vecs := make([][]int8, len(vocab))
	for i := range vecs {
		vecs[i] = make([]int8, dims)
		for j := range vecs[i] {
			vecs[i][j] = int8(rng.IntN(255) - 127)
		}
	}
	wv, err := decodeWordVectors(EncodeWordVectors(vocab, vecs, dims))
	if err != nil {
		tb.Fatal(err)
	}
	return wv
}

// TestVectorsKeepTheView: with word vectors (both uses on, at weights that let them decide), a
// search over a view still ranks as over an index of the view's tools alone: a tool's vector is
// made of its own text, a query word looks for every term near it (not the nearest few, where a
// hidden tool's term could displace a visible one's), and the dense score is scaled to the best
// in the view.
func TestVectorsKeepTheView(t *testing.T) {
	racetest.SkipPureComputation(t)
	vr := &vectorRanking{wv: randomTable(t), nearFloor: 0.3, nearWeight: 0.5, denseWeight: 1}
	checkViewRanksAsIfAlone(t, func(tools []Tool) *BM25 { return newBM25(tools, vr) })
}

// TestVectorsOffChangeNothing: an index built without a table ranks exactly as before word
// vectors existed (the golden ranking), and one with a table whose weights are zero ranks as one
// without.
func TestVectorsOffChangeNothing(t *testing.T) {
	catalog := loadCatalog(t)
	docs := toolsOf(catalog)
	plain := NewBM25(docs)
	zero := newBM25(docs, &vectorRanking{wv: randomTable(t)})
	for _, q := range loadQueries(t, catalog) {
		if got, want := zero.Search(q.text, 10, nil), plain.Search(q.text, 10, nil); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: with zero weights %v, without vectors %v", q.text, got, want)
		}
	}
}

// wordVectorVariants are the uses of word vectors the evaluation measures, at the parameters
// docs/search.md reports, each by its row's name there.
var wordVectorVariants = []struct {
	name string
	vr   vectorRanking
}{
	{"soft matching, cosine ≥ 0.5", vectorRanking{nearFloor: 0.5, nearWeight: 0.2}},
	{"soft matching, cosine ≥ 0.6", vectorRanking{nearFloor: 0.6, nearWeight: 0.2}},
	{"dense, weight 0.1", vectorRanking{denseWeight: 0.1}},
	{"dense, weight 0.25", vectorRanking{denseWeight: 0.25}},
	{"dense, weight 0.5", vectorRanking{denseWeight: 0.5}},
	{"dense gated, weight 0.25", vectorRanking{denseWeight: 0.25, denseGated: true}},
	{"dense gated, weight 0.5", vectorRanking{denseWeight: 0.5, denseGated: true}},
	{"dense alone (vectors only)", vectorRanking{denseWeight: 1e6}},
}

// TestWordVectorEvaluation measures the uses of word vectors on every task set, against words
// alone, and holds docs/search.md's two tables of them (§ Word vectors) to what it measures:
// every cell, every row. The word-vector table is not in the repository (that section says how
// to make it): TOOLSEARCH_WORDVEC names it, and without it the test is skipped.
//
//	TOOLSEARCH_WORDVEC=/tmp/wordvec.bin go test -run TestWordVectorEvaluation -v ./internal/toolsearch
func TestWordVectorEvaluation(t *testing.T) {
	wv := envTable(t)
	catalog := loadCatalog(t)
	docs := toolsOf(catalog)
	sets := seenSets(t, catalog)
	// measured[ranker][column] is a cell as the docs write it: "recall@1 / recall@5 / MRR".
	measured := map[string]map[string]string{}
	measure := func(name string, ix *BM25) {
		row := map[string]string{}
		var m1, m5, mm float64
		seen := len(sets) - 1 // the mean is of the sets before the blind one
		for i, qs := range sets {
			r := rankWith(ix, catalog, qs)
			row[evalFloors[i].file] = fmt.Sprintf("%.3f / %.3f / %.3f", r.r1, r.r5, r.mrr)
			if i < seen {
				m1, m5, mm = m1+r.r1/float64(seen), m5+r.r5/float64(seen), mm+r.mrr/float64(seen)
			}
		}
		row["mean"] = fmt.Sprintf("%.3f / %.3f / %.3f", m1, m5, mm)
		measured[name] = row
		t.Logf("| %s | %s |", name, row["mean"])
	}
	measure("words alone (the gateway's)", NewBM25(docs))
	for _, v := range wordVectorVariants {
		vr := v.vr
		vr.wv = wv
		measure(v.name, newBM25(docs, &vr))
	}
	checkRankerTables(t, measured, 2) // the seen sets' table and the blind set's
}

// checkWordVectorTables compares the cells of docs/search.md's word-vector tables (the table of
// the seen sets, whose columns are the mean and each set, and the table of the blind set, whose
// columns are recall@1, recall@5 and MRR) with what was measured, and counts the tables each
// ranker's row is in.
func checkWordVectorTables(t *testing.T, doc string, measured map[string]map[string]string) map[string]int {
	t.Helper()
	const blind = "queries-heldout-7.tsv" // the set written blind for the word-vector round
	column := func(head string) string {
		switch {
		case strings.HasPrefix(head, "mean of"):
			return "mean"
		case head == "tuned":
			return "queries.tsv"
		case head == "held-out 1":
			return "queries-heldout.tsv"
		case strings.HasPrefix(head, "held-out "):
			return "queries-heldout-" + strings.TrimPrefix(head, "held-out ") + ".tsv"
		}
		return ""
	}
	cells := func(line string) []string {
		parts := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i, p := range parts {
			parts[i] = strings.TrimSpace(strings.ReplaceAll(p, "**", ""))
		}
		return parts
	}
	checked := map[string]int{}
	var head []string
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "|---") {
			continue // a table's rule, under its head
		}
		if !strings.HasPrefix(line, "| ") {
			head = nil
			continue
		}
		c := cells(line)
		if c[0] == "Ranker" {
			head = c
			continue
		}
		row, ok := measured[c[0]]
		if head == nil || !ok {
			continue
		}
		checked[c[0]]++
		if len(head) == 5 && head[1] == "Tasks" { // the blind set's table
			if got := c[2] + " / " + c[3] + " / " + c[4]; got != row[blind] {
				t.Errorf("docs/search.md, %s on %s: %s, measured %s", c[0], blind, got, row[blind])
			}
			continue
		}
		for i := 1; i < len(c) && i < len(head); i++ {
			col := column(head[i])
			if col == "" {
				t.Errorf("docs/search.md: a word-vector table's column %q names no task set", head[i])
				continue
			}
			if c[i] != row[col] {
				t.Errorf("docs/search.md, %s, %s: %s, measured %s", c[0], head[i], c[i], row[col])
			}
		}
	}
	return checked
}

// BenchmarkSearchWordVectors is BenchmarkSearchFullCatalog's search with each use of word vectors
// on, with the table TOOLSEARCH_WORDVEC names (skipped without one), and the index's rebuild.
func BenchmarkSearchWordVectors(b *testing.B) {
	wv := envTable(b)
	catalog := loadCatalog(b)
	queries := loadQueries(b, catalog)
	docs := toolsOf(catalog)
	for _, c := range []struct {
		name string
		vr   vectorRanking
	}{{"soft-match", vectorRanking{wv: wv, nearFloor: 0.6, nearWeight: 0.2}}, {"dense", vectorRanking{wv: wv, denseWeight: 0.25}}} {
		ix := newBM25(docs, &c.vr)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				ix.Search(queries[i%len(queries)].text, 10, nil)
			}
		})
	}
	b.Run("reindex", func(b *testing.B) {
		b.ReportAllocs()
		vr := &vectorRanking{wv: wv, nearFloor: 0.6, nearWeight: 0.2, denseWeight: 0.25}
		for b.Loop() {
			newBM25(docs, vr)
		}
	})
}

// envTable is the word-vector table the file TOOLSEARCH_WORDVEC names; without one the test or
// benchmark is skipped.
func envTable(tb testing.TB) *wordVectors {
	tb.Helper()
	path := os.Getenv("TOOLSEARCH_WORDVEC")
	if path == "" {
		tb.Skip("TOOLSEARCH_WORDVEC names no word-vector table")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	wv, err := decodeWordVectors(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return wv
}
