package toolsearch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/racetest"
)

// wordnetTable is the WordNet table internal/tools/wordnet made (testdata/wordnet.txt).
func wordnetTable(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "wordnet.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// wordnetVariants are the uses of the WordNet table docs/search.md reports, each by its row's
// name there; the first is the one the evaluation of a new task set runs (TestEvaluateSet).
var wordnetVariants = []struct {
	name string
	th   thesaurus
}{
	{"WordNet gated, synonyms 0.3", thesaurus{weights: [3]float64{0.3, 0, 0}, gated: true}},
	{"WordNet, synonyms 0.3", thesaurus{weights: [3]float64{0.3, 0, 0}}},
	{"WordNet, synonyms 0.2", thesaurus{weights: [3]float64{0.2, 0, 0}}},
	{"WordNet, synonyms 0.3, broader 0.2", thesaurus{weights: [3]float64{0.3, 0.2, 0}}},
	{"WordNet, synonyms 0.3, kinds 0.2", thesaurus{weights: [3]float64{0.3, 0, 0.2}}},
	{"WordNet, all three 0.3 / 0.2 / 0.2", thesaurus{weights: [3]float64{0.3, 0.2, 0.2}}},
	{"WordNet gated, all three 0.3 / 0.2 / 0.2", thesaurus{weights: [3]float64{0.3, 0.2, 0.2}, gated: true}},
}

// TestWordNetLookup: the table's binary search finds every stem it holds and nothing else, and a
// stem's columns are what the generator wrote.
func TestWordNetLookup(t *testing.T) {
	th := &thesaurus{table: wordnetTable(t)}
	n := 0
	for _, line := range strings.Split(strings.TrimSuffix(th.table, "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		key, cols, _ := strings.Cut(line, "\t")
		if got := th.line(key); got != cols {
			t.Fatalf("%q: %q, want %q", key, got, cols)
		}
		if got := th.line(key + "zzz"); got != "" && !strings.Contains(th.table, "\n"+key+"zzz\t") {
			t.Fatalf("%q: %q for a stem not in the table", key+"zzz", got)
		}
		n++
	}
	for _, absent := range []string{"", "#", "aaaaaa", "zzzzzz", "xyzzy"} {
		if got := th.line(absent); got != "" {
			t.Errorf("%q: %q, want nothing", absent, got)
		}
	}
	if same, _, _ := strings.Cut(th.line("evict"), "\t"); !strings.Contains(" "+same+" ", " eviction ") {
		t.Errorf("evict: %q, want eviction among its derived forms", th.line("evict"))
	}
	t.Logf("%d stems", n)
}

// TestWordNetKeepsTheView: with the WordNet table (every column, ungated and gated), a search
// over a view still ranks as over an index of the view's tools alone, and copies of tools still
// take one slot and never come first (TestShadowing's check).
func TestWordNetKeepsTheView(t *testing.T) {
	racetest.SkipPureComputation(t)
	table := wordnetTable(t)
	for _, gated := range []bool{false, true} {
		th := &thesaurus{table: table, weights: [3]float64{0.3, 0.2, 0.2}, gated: gated}
		build := func(tools []Tool) *BM25 { return newBM25(tools, nil).withThesaurus(th) }
		checkViewRanksAsIfAlone(t, build)
		checkShadowing(t, build)
	}
}

// TestWordNetOffChangesNothing: a table whose weights are zero ranks as no table.
func TestWordNetOffChangesNothing(t *testing.T) {
	catalog := loadCatalog(t)
	docs := toolsOf(catalog)
	plain := NewBM25(docs)
	zero := newBM25(docs, nil).withThesaurus(&thesaurus{table: wordnetTable(t)})
	for _, q := range loadQueries(t, catalog) {
		if got, want := zero.Search(q.text, 10, nil), plain.Search(q.text, 10, nil); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: with zero weights %v, without a table %v", q.text, got, want)
		}
	}
}

// TestWordNetEvaluation measures the uses of the WordNet table on every seen task set, against
// the gateway's ranker, and holds docs/search.md's table of them (§ WordNet) to what it measures.
//
//	go test -run TestWordNetEvaluation -v ./internal/toolsearch
func TestWordNetEvaluation(t *testing.T) {
	racetest.SkipPureComputation(t)
	table := wordnetTable(t)
	rows := []rankerRow{{"without WordNet (the gateway's)", func(docs []Tool) *BM25 { return NewBM25(docs) }}}
	for _, v := range wordnetVariants {
		th := v.th
		th.table = table
		rows = append(rows, rankerRow{v.name, func(docs []Tool) *BM25 { return newBM25(docs, nil).withThesaurus(&th) }})
	}
	checkRankerTables(t, measureRankers(t, rows), 1)
}

// BenchmarkSearchWordNet is BenchmarkSearchFullCatalog's search with the WordNet table (every
// column; ungated, where every query word looks its related words up).
func BenchmarkSearchWordNet(b *testing.B) {
	catalog := loadCatalog(b)
	queries := loadQueries(b, catalog)
	ix := newBM25(toolsOf(catalog), nil).withThesaurus(&thesaurus{table: wordnetTable(b), weights: [3]float64{0.3, 0.2, 0.2}})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ix.Search(queries[i%len(queries)].text, 10, nil)
	}
}

// TestThesaurusNamesNoBackend: a word the table relates to a query word is looked for in tools,
// but never names a backend: "falloff" (WordNet: slack) does not ask for the Slack backend.
func TestThesaurusNamesNoBackend(t *testing.T) {
	tools := []Tool{
		{Name: "slack__post_message", Backend: "slack", Description: "Post a message."},
		{Name: "notes__post_note", Backend: "notes", Description: "Post a note about a slack period."},
	}
	ix := newBM25(tools, nil).withThesaurus(&thesaurus{table: "falloff\tslack\n", weights: [3]float64{0.3}})
	sc := ix.getScratch()
	v := ix.newView(nil, sc)
	exps := [][]expansion{ix.expand("falloff", &v)}
	if !slices.ContainsFunc(exps[0], func(e expansion) bool { return e.term == "slack" && e.thesaurus }) {
		t.Fatalf("falloff looks for %v, want slack among them", exps[0])
	}
	if named := ix.namedBackends(exps, &v); len(named) != 0 {
		t.Errorf("falloff names the backends %v, want none", named)
	}
}
