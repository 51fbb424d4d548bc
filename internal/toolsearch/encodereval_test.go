package toolsearch

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// TestRetrievalEncoderEvaluation measures a sentence encoder trained for retrieval on the seen
// task sets (evalFloors), alone and fused with the lexical ranker (docs/search.md § A
// retrieval-trained encoder: a measurement). The model does not run here: its vectors are
// computed outside, from texts this test writes, and read back. Run by hand, in two steps:
//
//	TOOLSEARCH_ENCODER_TEXTS=/tmp/texts.json go test -run TestRetrievalEncoderEvaluation ./internal/toolsearch
//	(embed every text of /tmp/texts.json into /tmp/vectors.json: {"model": ..., "vectors": {text: [numbers]}})
//	TOOLSEARCH_ENCODER_VECTORS=/tmp/vectors.json go test -run TestRetrievalEncoderEvaluation -v ./internal/toolsearch
//
// Skipped when neither is set. It holds the encoder to no figure (the lexical column, counted as
// TestEvaluation counts, keeps its floors). The configuration reported set by set is chosen by
// the mean MRR over the seen sets alone, among the grid below, before any set's figures are
// printed. TOOLSEARCH_EVAL_SET (a file of testdata), given to both steps, adds an untouched set's
// row after the choice, to judge it once.
func TestRetrievalEncoderEvaluation(t *testing.T) {
	textsOut, vectorsIn := os.Getenv("TOOLSEARCH_ENCODER_TEXTS"), os.Getenv("TOOLSEARCH_ENCODER_VECTORS")
	if textsOut == "" && vectorsIn == "" {
		t.Skip("TOOLSEARCH_ENCODER_TEXTS and TOOLSEARCH_ENCODER_VECTORS name no file")
	}
	catalog := loadCatalog(t)
	docs := toolsOf(catalog)
	var sets [][]evalQuery
	for _, f := range evalFloors {
		sets = append(sets, loadQueryFile(t, catalog, f.file))
	}
	// An untouched set to judge the choice on, once: its tasks are embedded with the others but
	// weigh nothing in the choice, and its row comes last.
	var judge []evalQuery
	judgeFile := os.Getenv("TOOLSEARCH_EVAL_SET")
	if judgeFile != "" {
		judge = loadQueryFile(t, catalog, judgeFile)
	}
	if textsOut != "" {
		writeEncoderTexts(t, textsOut, docs, append(sets, judge))
		return
	}
	vecs := readEncoderVectors(t, vectorsIn)
	ix := NewBM25(docs)
	qvecs := make([][][]float32, len(sets))
	for s, qs := range sets {
		for _, q := range qs {
			qvecs[s] = append(qvecs[s], vecs.of(t, q.text))
		}
	}
	toolVecs := make([][][]float32, len(encoderToolTexts))
	for k, tt := range encoderToolTexts {
		for _, d := range docs {
			toolVecs[k] = append(toolVecs[k], vecs.of(t, tt.text(d)))
		}
	}
	measure := func(c encoderConfig) []evalResult {
		out := make([]evalResult, len(sets))
		for s, qs := range sets {
			var tools [][]float32
			if !c.r.lexical {
				tools = toolVecs[c.text]
			}
			out[s] = rankDense(ix, catalog, qs, qvecs[s], tools, c.r)
		}
		return out
	}
	meanOf := func(rs []evalResult) (m evalResult) {
		for _, r := range rs {
			m.r1, m.r5, m.mrr = m.r1+r.r1, m.r5+r.r5, m.mrr+r.mrr
		}
		n := float64(len(rs))
		m.r1, m.r5, m.mrr = m.r1/n, m.r5/n, m.mrr/n
		return m
	}
	cell := func(r evalResult) string { return fmt.Sprintf("%.3f / %.3f / %.3f", r.r1, r.r5, r.mrr) }

	// The grid, and the mean over the seen sets of each configuration: the choice is made here.
	t.Logf("model: %s; %d seen sets; configurations by their mean over them (recall@1 / recall@5 / MRR):", vecs.Model, len(sets))
	lexical := encoderConfig{name: "lexical (the gateway's)", r: denseRanker{lexical: true}}
	grid := encoderGrid()
	results := make([][]evalResult, len(grid))
	bestAlone, bestFused := -1, -1
	for i, c := range grid {
		results[i] = measure(c)
		m := meanOf(results[i])
		t.Logf("| %s | %s |", c.name, cell(m))
		best := &bestFused
		if c.r.alone {
			best = &bestAlone
		}
		if *best < 0 || m.mrr > meanOf(results[*best]).mrr {
			*best = i
		}
	}
	lex := measure(lexical)
	t.Logf("| %s | %s |", lexical.name, cell(meanOf(lex)))
	t.Logf("chosen by mean MRR: dense alone %q, fused %q", grid[bestAlone].name, grid[bestFused].name)

	// Then, set by set: the lexical ranker, the best dense ranking alone and the chosen fusion.
	t.Logf("| Set | Tasks | lexical (the gateway's) | dense alone (%s) | %s |", grid[bestAlone].name, grid[bestFused].name)
	t.Logf("|---|---|---|---|---|")
	total := 0
	for _, qs := range sets {
		total += len(qs)
	}
	t.Logf("| mean of the %d seen sets | %d | %s | %s | %s |", len(sets), total, cell(meanOf(lex)),
		cell(meanOf(results[bestAlone])), cell(meanOf(results[bestFused])))
	for s, f := range evalFloors {
		t.Logf("| %s | %d | %s | %s | %s |", f.file, len(sets[s]), cell(lex[s]), cell(results[bestAlone][s]), cell(results[bestFused][s]))
		// The lexical column is TestEvaluation's ranking, counted alike: it keeps its floors.
		if lex[s].r1 < f.r1 || lex[s].r5 < f.r5 || lex[s].mrr < f.mrr {
			t.Errorf("%s: lexical %s, below the floors of TestEvaluation", f.file, cell(lex[s]))
		}
	}
	if judgeFile != "" {
		var jv [][]float32
		for _, q := range judge {
			jv = append(jv, vecs.of(t, q.text))
		}
		row := func(c encoderConfig) string {
			var tools [][]float32
			if !c.r.lexical {
				tools = toolVecs[c.text]
			}
			return cell(rankDense(ix, catalog, judge, jv, tools, c.r))
		}
		t.Logf("| %s (judged once, after the choice) | %d | %s | %s | %s |", judgeFile, len(judge), row(lexical), row(grid[bestAlone]), row(grid[bestFused]))
	}

	// What the dense ranking knows that the words miss: of the tasks the lexical ranker does not
	// show in its first five, how many the dense ranking alone shows in its first five (the most
	// any fusion could gain at five), and how many the chosen fusion does.
	alone, fused := grid[bestAlone], grid[bestFused]
	for s, f := range evalFloors {
		lexRanks := taskRanks(ix, catalog, sets[s], qvecs[s], nil, lexical.r)
		aloneRanks := taskRanks(ix, catalog, sets[s], qvecs[s], toolVecs[alone.text], alone.r)
		fusedRanks := taskRanks(ix, catalog, sets[s], qvecs[s], toolVecs[fused.text], fused.r)
		var missed, denseFinds, fusedFinds, fusedLoses int
		for k := range sets[s] {
			inLex := lexRanks[k] >= 1 && lexRanks[k] <= 5
			if !inLex {
				missed++
				if aloneRanks[k] >= 1 && aloneRanks[k] <= 5 {
					denseFinds++
				}
				if fusedRanks[k] >= 1 && fusedRanks[k] <= 5 {
					fusedFinds++
				}
			} else if fusedRanks[k] < 1 || fusedRanks[k] > 5 {
				fusedLoses++
			}
		}
		t.Logf("%s: lexical misses %d at 5; dense alone finds %d of them, the fusion %d; the fusion loses %d the lexical found",
			f.file, missed, denseFinds, fusedFinds, fusedLoses)
		// TOOLSEARCH_ENCODER_MISSES lists the tasks the fusion misses at five, gains or loses.
		if os.Getenv("TOOLSEARCH_ENCODER_MISSES") != "" {
			for k, q := range sets[s] {
				inLex, inFused := lexRanks[k] >= 1 && lexRanks[k] <= 5, fusedRanks[k] >= 1 && fusedRanks[k] <= 5
				if inLex != inFused || !inFused {
					t.Logf("  %s: %q: lexical %d, dense %d, fused %d", f.file, q.text, lexRanks[k], aloneRanks[k], fusedRanks[k])
				}
			}
		}
	}
}

// encoderToolTexts are the texts a tool is embedded from, one per column of the grid: the
// gateway's EmbedText (name words, title, lead sentence, parameter names); the name words, title
// and lead sentence; the name words, title and whole description.
var encoderToolTexts = []struct {
	name string
	text func(Tool) string
}{
	{"embed text", EmbedText},
	{"lead sentence", func(d Tool) string {
		lead, _ := leadSentence(truncate(d.Description, maxDescribeBytes))
		return nameAndTitle(d) + ". " + lead
	}},
	{"description", func(d Tool) string {
		return nameAndTitle(d) + ". " + truncate(d.Description, maxDescribeBytes)
	}},
}

// nameAndTitle is the words of a tool's namespaced name, then its title if it has one.
func nameAndTitle(d Tool) string {
	s := strings.Join(words(d.Name), " ")
	if d.Title != "" {
		s += ". " + d.Title
	}
	return s
}

// encoderConfig is one configuration of the grid: a tool text and a ranker.
type encoderConfig struct {
	name string
	text int // index in encoderToolTexts
	r    denseRanker
}

// encoderGrid is every configuration measured: for each tool text, the dense ranking alone,
// reciprocal-rank fusion at K 10 and 60 with the dense list weighted 0.5, 1 and 2, and the blend
// at weights 0.25, 0.5, 1 and 2 (the grid of the sentence-encoder round).
func encoderGrid() []encoderConfig {
	var grid []encoderConfig
	for k, tt := range encoderToolTexts {
		grid = append(grid, encoderConfig{name: tt.name + ", dense alone", text: k, r: denseRanker{alone: true}})
		for _, rrfK := range []float64{10, 60} {
			for _, w := range []float64{0.5, 1, 2} {
				grid = append(grid, encoderConfig{name: fmt.Sprintf("%s, rrf K %g weight %g", tt.name, rrfK, w), text: k,
					r: denseRanker{d: Dense{Method: FuseRRF, Weight: w, K: rrfK}}})
			}
		}
		for _, w := range []float64{0.25, 0.5, 1, 2} {
			grid = append(grid, encoderConfig{name: fmt.Sprintf("%s, blend weight %g", tt.name, w), text: k,
				r: denseRanker{d: Dense{Method: FuseBlend, Weight: w}}})
		}
	}
	return grid
}

// taskRanks is each task's rank (1-based; 0: not ranked) with r, as rankDense counts it.
func taskRanks(ix *BM25, catalog []evalTool, qs []evalQuery, qvecs, tools [][]float32, r denseRanker) []int {
	out := make([]int, len(qs))
	for k, q := range qs {
		one := rankDense(ix, catalog, []evalQuery{q}, [][]float32{qvecs[k]}, tools, r)
		if one.mrr > 0 {
			out[k] = int(math.Round(1 / one.mrr))
		}
	}
	return out
}

// writeEncoderTexts writes every text to embed, each once: every tool's texts, then every task.
func writeEncoderTexts(t *testing.T, path string, docs []Tool, sets [][]evalQuery) {
	seen := map[string]bool{}
	var texts []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			texts = append(texts, s)
		}
	}
	for _, tt := range encoderToolTexts {
		for _, d := range docs {
			add(tt.text(d))
		}
	}
	for _, qs := range sets {
		for _, q := range qs {
			add(q.text)
		}
	}
	perTool := map[string][]string{}
	for _, tt := range encoderToolTexts {
		for _, d := range docs {
			perTool[tt.name] = append(perTool[tt.name], tt.text(d))
		}
	}
	// "tools" lists each tool text in catalog order, to time the embedding of a whole catalog.
	b, err := json.Marshal(map[string]any{"texts": texts, "tools": perTool})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d texts to %s", len(texts), path)
}

// encoderVectors is the file of vectors: the model they came from and each text's vector.
type encoderVectors struct {
	Model   string               `json:"model"`
	Vectors map[string][]float32 `json:"vectors"`
}

func readEncoderVectors(t *testing.T, path string) *encoderVectors {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v encoderVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &v
}

// of is text's vector scaled to length 1 (as internal/embeddings scales what an endpoint
// answers); a text the file lacks fails the test.
func (v *encoderVectors) of(t *testing.T, text string) []float32 {
	x, ok := v.Vectors[text]
	if !ok || len(x) == 0 {
		t.Fatalf("no vector for %q", text)
	}
	n := 0.0
	for _, f := range x {
		n += float64(f) * float64(f)
	}
	out := make([]float32, len(x))
	for i, f := range x {
		out[i] = float32(float64(f) / math.Sqrt(n))
	}
	return out
}
