package toolsearch

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/racetest"
)

// Word associations learned from the labelled task sets: an experiment (docs/search.md § Learned
// associations). A task's words and the words of its tool's name, title and lead sentence that
// the task lacks make pairs; a pair that recurs over different tasks and different tools says
// how users ask for what tools say ("evict" → "drain"?), and a query word also looks for the
// words it is paired with, as for a synonym.

// mineParams are the cuts of the mining.
type mineParams struct {
	minTasks, minTools int     // distinct tasks and tools a pair must recur over
	minShare           float64 // of the tasks holding the task word, the share that make the pair
}

// mineAssociations mines the pairs of the tasks of sets over catalog and returns them as a table
// in the format of the WordNet table (one column): a line per task word, sorted, then its words.
func mineAssociations(catalog []evalTool, sets [][]evalQuery, p mineParams) string {
	byName := map[string]Tool{}
	for _, t := range catalog {
		byName[t.tool.Name] = t.tool
	}
	type support struct{ tasks, tools map[string]bool }
	pairs := map[[2]string]*support{}
	holding := map[string]int{} // task word → tasks that hold it
	for _, qs := range sets {
		for _, q := range qs {
			task := map[string]bool{}
			for _, w := range queryTerms(q.text) {
				task[w] = true
			}
			for w := range task {
				holding[w]++
			}
			for _, name := range q.tools {
				for b := range toolWords(byName[name]) {
					if task[b] {
						continue
					}
					for a := range task {
						s := pairs[[2]string{a, b}]
						if s == nil {
							s = &support{map[string]bool{}, map[string]bool{}}
							pairs[[2]string{a, b}] = s
						}
						s.tasks[q.text] = true
						s.tools[name] = true
					}
				}
			}
		}
	}
	lines := map[string][]string{}
	for k, s := range pairs {
		if len(s.tasks) >= p.minTasks && len(s.tools) >= p.minTools && float64(len(s.tasks)) >= p.minShare*float64(holding[k[0]]) {
			lines[k[0]] = append(lines[k[0]], k[1])
		}
	}
	var b strings.Builder
	for _, a := range slices.Sorted(maps.Keys(lines)) {
		slices.Sort(lines[a])
		fmt.Fprintf(&b, "%s\t%s\n", a, strings.Join(lines[a], " "))
	}
	return b.String()
}

// toolWords are the words of what a tool says it does: its backend-side name, title and lead
// sentence.
func toolWords(t Tool) map[string]bool {
	out := map[string]bool{}
	lead, _ := leadSentence(truncate(t.Description, maxDescribeBytes))
	for _, text := range []string{t.Name, t.Title, lead} {
		for _, w := range Tokens(text) {
			out[w] = true
		}
	}
	for _, w := range Tokens(t.Backend) {
		delete(out, w)
	}
	return out
}

// learnedParams and learnedWeight are the mining's cuts and the weight of a learned word, gated
// (only a query word that no tool of the view holds looks its words up): the configuration with
// the best mean MRR left one set out, among those docs/search.md lists.
var (
	learnedParams = mineParams{minTasks: 2, minTools: 2, minShare: 0.5}
	learnedWeight = 0.2
)

// learned is an index of docs ranking with the associations mined from sets.
func learned(catalog []evalTool, docs []Tool, sets [][]evalQuery) *BM25 {
	table := mineAssociations(catalog, sets, learnedParams)
	return newBM25(docs, nil).withThesaurus(&thesaurus{table: table, weights: [3]float64{learnedWeight}, gated: true})
}

// TestLearnedEvaluation measures the learned associations on every seen task set, mined on all
// of them (in-sample) and on all but the set measured (left one set out), and holds
// docs/search.md's table of them (§ Learned associations) to what it measures.
//
//	go test -run TestLearnedEvaluation -v ./internal/toolsearch
func TestLearnedEvaluation(t *testing.T) {
	racetest.SkipPureComputation(t)
	catalog := loadCatalog(t)
	docs := toolsOf(catalog)
	sets := seenSets(t, catalog)
	measured := measureRankers(t, []rankerRow{
		{"without learned associations (the gateway's)", NewBM25},
		{"learned, in-sample", func(docs []Tool) *BM25 { return learned(catalog, docs, sets) }},
	})
	row := map[string]string{}
	var m [3]float64
	for k := range sets {
		ix := learned(catalog, docs, slices.Concat(sets[:k], sets[k+1:]))
		r := rankWith(ix, catalog, sets[k])
		row[evalFloors[k].file] = fmt.Sprintf("%.3f / %.3f / %.3f", r.r1, r.r5, r.mrr)
		n := float64(len(sets))
		m = [3]float64{m[0] + r.r1/n, m[1] + r.r5/n, m[2] + r.mrr/n}
	}
	row["mean"] = fmt.Sprintf("%.3f / %.3f / %.3f", m[0], m[1], m[2])
	measured["learned, left one set out"] = row
	line := "| learned, left one set out | " + row["mean"]
	for _, f := range evalFloors {
		line += " | " + row[f.file]
	}
	t.Log(line + " |")
	checkRankerTables(t, measured, 1)
}

// TestMinedPairsRecur: a pair the mining keeps recurs over at least two tasks and two tools,
// and a pair that one task makes with its tool is not kept.
func TestMinedPairsRecur(t *testing.T) {
	tool := func(name, desc string) evalTool {
		return evalTool{server: "s", tool: Tool{Name: "s__" + name, Description: desc, Backend: "s"}}
	}
	catalog := []evalTool{tool("drain_node", "Drain a node."), tool("cordon_node", "Cordon a node."), tool("read_file", "Read a file.")}
	sets := [][]evalQuery{{
		{text: "evict the pods from ip-1", tools: []string{"s__drain_node"}},
		{text: "evict workloads off host b", tools: []string{"s__cordon_node"}},
		{text: "show me notes.txt", tools: []string{"s__read_file"}},
	}}
	table := mineAssociations(catalog, sets, mineParams{minTasks: 2, minTools: 2})
	th := &thesaurus{table: table}
	if got := th.line("evict"); got != "nod" {
		t.Errorf("evict: %q, want the word both tools share (nod)", got)
	}
	if got := th.line("show"); got != "" {
		t.Errorf("show: %q, want nothing: one task and one tool", got)
	}
}
