package toolsearch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The evaluation of docs/toolsets.md: real MCP servers' own tools/list (testdata/catalog, captured
// by testdata/capture.sh, each file with the package and version it came from), and tasks phrased
// as a user would (testdata/queries.tsv), each labelled with the tools that do it. It runs offline.

// evalTool is one tool of the captured catalog.
type evalTool struct {
	server string
	tool   Tool
	raw    []byte // the definition as a client would receive it, namespaced
}

// loadCatalog reads the captured catalog, every tool namespaced server__name as the gateway
// would, in file order.
func loadCatalog(tb testing.TB) []evalTool {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "catalog", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no captured catalog: %v", err)
	}
	sort.Strings(files)
	var out []evalTool
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var doc struct {
			Source string                       `json:"source"`
			Tools  []map[string]json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		if doc.Source == "" {
			tb.Fatalf("%s: no source (package@version)", f)
		}
		server := strings.TrimSuffix(filepath.Base(f), ".json")
		for _, t := range doc.Tools {
			var name string
			if err := json.Unmarshal(t["name"], &name); err != nil {
				tb.Fatalf("%s: a tool without a name", f)
			}
			t["name"], _ = json.Marshal(server + "__" + name)
			out = append(out, newEvalTool(tb, server, t))
		}
	}
	return out
}

// toolsOf is what the ranker reads of each tool of catalog.
func toolsOf(catalog []evalTool) []Tool {
	docs := make([]Tool, len(catalog))
	for i, t := range catalog {
		docs[i] = t.tool
	}
	return docs
}

// newEvalTool is the tool of definition def (namespaced already) served by backend server.
func newEvalTool(tb testing.TB, server string, def map[string]json.RawMessage) evalTool {
	tb.Helper()
	raw, err := json.Marshal(def)
	if err != nil {
		tb.Fatal(err)
	}
	tool, err := ParseTool(raw)
	if err != nil {
		tb.Fatal(err)
	}
	tool.Backend = server
	return evalTool{server: server, tool: tool, raw: raw}
}

// evalQuery is one labelled task.
type evalQuery struct {
	text  string
	tools []string
}

func loadQueries(tb testing.TB, catalog []evalTool) []evalQuery {
	tb.Helper()
	return loadQueryFile(tb, catalog, "queries.tsv")
}

// loadQueryFile reads one file of labelled tasks; every label must name a tool of the catalog.
func loadQueryFile(tb testing.TB, catalog []evalTool, name string) []evalQuery {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	known := map[string]bool{}
	for _, t := range catalog {
		known[t.tool.Name] = true
	}
	var out []evalQuery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		text, labels, ok := strings.Cut(line, "\t")
		if !ok {
			tb.Fatalf("queries.tsv: no tab in %q", line)
		}
		q := evalQuery{text: text, tools: strings.Split(labels, ",")}
		for _, l := range q.tools {
			if !known[l] {
				tb.Fatalf("queries.tsv: %q is labelled with %s, which is not in the catalog", text, l)
			}
		}
		out = append(out, q)
	}
	return out
}

// evalSize is one catalog size of the evaluation: the servers it holds (nil: all).
type evalSize struct {
	name    string
	servers []string
}

var evalSizes = []evalSize{
	{"~50", []string{"filesystem", "memory", "github", "maps"}},
	{"~300", []string{"brave", "chromedevtools", "circleci", "context7", "desktopcommander", "eaplaywright",
		"everything", "filesystem", "github", "gitlab", "gosdk-everything", "kubernetes", "maps", "memory",
		"mongodb", "playwright", "postgres", "puppeteer", "sequentialthinking", "slack"}},
	{"all", nil},
}

// evalResult is the evaluation at one size.
type evalResult struct {
	size                 string
	tools, queries       int
	r1, r5, mrr          float64
	fullBytes, sentBytes int
	misses               []string
}

// evaluate ranks every query whose tools are in the catalog subset, with the full ranking for
// the reciprocal rank, and measures what a caller receives: the whole tools/list against the
// search-mode tools/list plus one find_tools answer of five definitions.
func evaluate(catalog []evalTool, queries []evalQuery, size evalSize) evalResult {
	var sub []evalTool
	for _, t := range catalog {
		if size.servers == nil || slices.Contains(size.servers, t.server) {
			sub = append(sub, t)
		}
	}
	res := rank(sub, queries)
	res.size = size.name
	return res
}

// rank ranks every query whose tools are in catalog against it; a query is found at k when one
// of its tools is shown in the first k slots.
func rank(sub []evalTool, queries []evalQuery) evalResult {
	return rankWith(NewBM25(toolsOf(sub)), sub, queries)
}

// rankWith is rank with ix, an index of sub.
func rankWith(ix *BM25, sub []evalTool, queries []evalQuery) evalResult {
	in := map[string]bool{}
	res := evalResult{tools: len(sub), fullBytes: len(`{"tools":[]}`)}
	for _, t := range sub {
		in[t.tool.Name] = true
		res.fullBytes += len(t.raw) + 1
	}
	found := 0
	for _, q := range queries {
		var want []string
		for _, l := range q.tools {
			if in[l] {
				want = append(want, l)
			}
		}
		if len(want) == 0 {
			continue
		}
		res.queries++
		hits := ix.Search(q.text, len(sub), nil)
		rank := 0
		for i, h := range hits {
			if slices.Contains(want, sub[h.Index].tool.Name) {
				rank = i + 1
				break
			}
		}
		if rank == 1 {
			res.r1++
		}
		if rank >= 1 && rank <= 5 {
			res.r5++
		} else {
			top := []string{}
			for _, h := range hits[:min(3, len(hits))] {
				top = append(top, sub[h.Index].tool.Name)
			}
			res.misses = append(res.misses, fmt.Sprintf("%q: want %s, rank %d, top %v", q.text, strings.Join(want, "|"), rank, top))
		}
		if rank > 0 {
			res.mrr += 1 / float64(rank)
		}
		for _, h := range hits[:min(5, len(hits))] {
			res.sentBytes += len(sub[h.Index].raw) + 1
		}
		found++
	}
	n := float64(res.queries)
	res.r1, res.r5, res.mrr = res.r1/n, res.r5/n, res.mrr/n
	// Per task: the search-mode tools/list (the two meta-tools, about 1.3 kB) and one find_tools
	// answer (its five definitions, twice: structured and as text).
	res.sentBytes = metaToolBytes + 2*res.sentBytes/max(found, 1)
	return res
}

// metaToolBytes is the size of the find_tools and call_tool definitions tools/list shows in
// search mode (mcphttp/search.go), rounded up.
const metaToolBytes = 1300

// evalFloors are the figures each task set must keep on the whole catalog (recall@1, recall@5,
// MRR), as docs/search.md reports them: a change to the ranker that loses any of them fails.
// They are the figures reached, not the aim: on tasks nobody tuned for the aim is recall@5 0.95
// and MRR 0.85, which the sets run untouched (queries-heldout-6.tsv, then -7 and -8) do not reach.
var evalFloors = []struct {
	file        string
	r1, r5, mrr float64
	// judge marks the set that judged the fifth round (WordNet, learned associations): the
	// tables of that round's experiments (seenSets) are over the sets seen before it.
	judge bool
}{
	{"queries.tsv", 0.784, 0.976, 0.863, false},           // tuned on
	{"queries-heldout.tsv", 0.824, 0.974, 0.891, false},   // held out at first, then tuned on
	{"queries-heldout-2.tsv", 0.757, 0.966, 0.843, false}, // held out at first, then tuned on
	{"queries-heldout-3.tsv", 0.874, 0.999, 0.925, false}, // the first round's confirmation, then tuned on
	{"queries-heldout-4.tsv", 0.629, 0.945, 0.759, false}, // the second round's confirmation, then tuned on
	{"queries-heldout-5.tsv", 0.688, 0.940, 0.795, false}, // written for tuning
	{"queries-heldout-6.tsv", 0.633, 0.792, 0.711, false}, // the second round's confirmation, seen in the third
	{"queries-heldout-7.tsv", 0.431, 0.655, 0.535, false}, // written blind in the third round, run once at its end
	{"queries-heldout-8.tsv", 0.354, 0.547, 0.453, true},  // written blind in the fourth round, run once at the fifth's end
}

// TestEvaluation reports recall@1, recall@5, mean reciprocal rank and the context a search saves
// on the real catalog at three sizes and for each task set, and holds every set to its floors.
func TestEvaluation(t *testing.T) {
	catalog := loadCatalog(t)
	queries := loadQueries(t, catalog)
	if len(queries) < 100 {
		t.Fatalf("%d queries, want at least 100", len(queries))
	}
	t.Logf("| tasks | catalog | tools | tasks | recall@1 | recall@5 | MRR | tools/list bytes | search bytes per task | saved |")
	t.Logf("|---|---|---|---|---|---|---|---|---|---|")
	logResult := func(set string, r evalResult) {
		t.Logf("| %s | %s | %d | %d | %.3f | %.3f | %.3f | %d | %d | %.0f%% |", set, r.size, r.tools, r.queries,
			r.r1, r.r5, r.mrr, r.fullBytes, r.sentBytes, 100*(1-float64(r.sentBytes)/float64(r.fullBytes)))
		for _, m := range r.misses {
			t.Logf("  %s miss: %s", set, m)
		}
	}
	for _, size := range evalSizes[:2] {
		logResult("queries.tsv", evaluate(catalog, queries, size))
	}
	for _, f := range evalFloors {
		r := evaluate(catalog, loadQueryFile(t, catalog, f.file), evalSizes[2])
		logResult(f.file, r)
		if r.r1 < f.r1 || r.r5 < f.r5 || r.mrr < f.mrr {
			t.Errorf("%s: recall@1 %.3f, recall@5 %.3f, MRR %.3f; below the floors %.3f, %.3f, %.3f",
				f.file, r.r1, r.r5, r.mrr, f.r1, f.r5, f.mrr)
		}
	}
}

// BenchmarkSearchFullCatalog is one find_tools ranking over the whole captured catalog, for a
// caller who may see every tool and for one who may not see one tool in seven: the statistics
// are then taken over the tools the caller may see, in the same pass as the ranking.
func BenchmarkSearchFullCatalog(b *testing.B) {
	catalog := loadCatalog(b)
	queries := loadQueries(b, catalog)
	docs := toolsOf(catalog)
	ix := NewBM25(docs)
	for _, c := range []struct {
		name  string
		allow func(int) bool
	}{{"every-tool", nil}, {"caller-view", func(i int) bool { return i%7 != 0 }}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				ix.Search(queries[i%len(queries)].text, 10, c.allow)
			}
		})
	}
}

// BenchmarkReindex is the rebuild after a backend's list changed: parsing every definition and
// indexing the whole captured catalog.
func BenchmarkReindex(b *testing.B) {
	catalog := loadCatalog(b)
	b.ReportAllocs()
	for b.Loop() {
		docs := make([]Tool, len(catalog))
		for i, t := range catalog {
			d, err := ParseTool(t.raw)
			if err != nil {
				b.Fatal(err)
			}
			docs[i] = d
		}
		NewBM25(docs)
	}
}

// BenchmarkReadQuery is the reading of a query alone (phrases, values, actions), the part of a
// search that does not depend on the catalog's size, over every task of the evaluation set.
func BenchmarkReadQuery(b *testing.B) {
	queries := loadQueries(b, loadCatalog(b))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		readQuery(queries[i%len(queries)].text)
	}
}
