package toolsearch

import (
	"fmt"
	"os"
	"testing"
)

// rankerRow is one ranker of an evaluation table: its row's name in docs/search.md, and how it
// indexes a catalog.
type rankerRow struct {
	name  string
	build func([]Tool) *BM25
}

// seenSets are the task sets of evalFloors, in its order: every one has been looked at while
// tuning.
func seenSets(tb testing.TB, catalog []evalTool) [][]evalQuery {
	tb.Helper()
	var sets [][]evalQuery
	for _, f := range evalFloors {
		if !f.judge {
			sets = append(sets, loadQueryFile(tb, catalog, f.file))
		}
	}
	return sets
}

// measureRankers ranks every seen task set (evalFloors) with each ranker on the whole catalog,
// and returns, per ranker, its cells as docs/search.md writes them ("recall@1 / recall@5 / MRR"),
// per set file and "mean" (of all the sets).
func measureRankers(t *testing.T, rows []rankerRow) map[string]map[string]string {
	catalog := loadCatalog(t)
	docs := toolsOf(catalog)
	sets := seenSets(t, catalog)
	measured := map[string]map[string]string{}
	for _, r := range rows {
		ix := r.build(docs)
		row := map[string]string{}
		var m1, m5, mm float64
		for i, qs := range sets {
			res := rankWith(ix, catalog, qs)
			row[evalFloors[i].file] = fmt.Sprintf("%.3f / %.3f / %.3f", res.r1, res.r5, res.mrr)
			n := float64(len(sets))
			m1, m5, mm = m1+res.r1/n, m5+res.r5/n, mm+res.mrr/n
		}
		row["mean"] = fmt.Sprintf("%.3f / %.3f / %.3f", m1, m5, mm)
		measured[r.name] = row
		line := "| " + r.name + " | " + row["mean"]
		for _, f := range evalFloors {
			line += " | " + row[f.file]
		}
		t.Log(line + " |")
	}
	return measured
}

// checkRankerTables holds docs/search.md's tables to measured: every row of a ranker measured is
// checked, cell by cell, and every ranker measured has a row in each of the tables its section
// has.
func checkRankerTables(t *testing.T, measured map[string]map[string]string, tables int) {
	t.Helper()
	raw, err := os.ReadFile("../../docs/search.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := checkWordVectorTables(t, string(raw), measured)
	for name := range measured {
		if checked[name] != tables {
			t.Errorf("docs/search.md: the ranker %q has %d rows, want %d", name, checked[name], tables)
		}
	}
}

// TestEvaluateSet ranks the task set TOOLSEARCH_EVAL_SET names (a file of testdata; skipped
// without one) with the gateway's ranker and with each method measured beside it, off in the
// gateway: the WordNet table (gated, synonyms at 0.3) and the learned associations, mined on
// every seen set (evalFloors) but the one ranked. It holds the set to no figures: it is how a new
// untouched set is run once, each method on and off.
//
//	TOOLSEARCH_EVAL_SET=queries-heldout-8.tsv go test -run TestEvaluateSet -v ./internal/toolsearch
func TestEvaluateSet(t *testing.T) {
	file := os.Getenv("TOOLSEARCH_EVAL_SET")
	if file == "" {
		t.Skip("TOOLSEARCH_EVAL_SET names no task set")
	}
	catalog := loadCatalog(t)
	docs := toolsOf(catalog)
	queries := loadQueryFile(t, catalog, file)
	var seen [][]evalQuery
	for _, f := range evalFloors {
		if f.file != file {
			seen = append(seen, loadQueryFile(t, catalog, f.file))
		}
	}
	wn := wordnetVariants[0].th
	wn.table = wordnetTable(t)
	t.Logf("| Ranker | Tasks | recall@1 | recall@5 | MRR |")
	t.Logf("|---|---|---|---|---|")
	for _, r := range []rankerRow{
		{"the gateway's (both off)", NewBM25},
		{wordnetVariants[0].name, func(docs []Tool) *BM25 { return newBM25(docs, nil).withThesaurus(&wn) }},
		{"learned associations", func(docs []Tool) *BM25 { return learned(catalog, docs, seen) }},
	} {
		res := rankWith(r.build(docs), catalog, queries)
		t.Logf("| %s | %d | %.3f | %.3f | %.3f |", r.name, res.queries, res.r1, res.r5, res.mrr)
	}
}
