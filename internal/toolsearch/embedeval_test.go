package toolsearch

import (
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/embeddings"
)

// TestEvaluateEmbeddings measures a real embeddings endpoint on the seen task sets (evalFloors):
// recall@1, recall@5 and MRR on the whole catalog for the lexical ranker, the dense ranking alone
// and each fusion. Skipped unless TOOLSEARCH_EMBEDDINGS_URL and TOOLSEARCH_EMBEDDINGS_MODEL are
// set (TOOLSEARCH_EMBEDDINGS_KEY, TOOLSEARCH_EMBEDDINGS_DIMENSIONS optional); it holds nothing to
// figures, and sends the catalog's tool texts and every task to the endpoint.
//
//	TOOLSEARCH_EMBEDDINGS_URL=https://api.openai.com/v1/embeddings \
//	TOOLSEARCH_EMBEDDINGS_MODEL=text-embedding-3-small TOOLSEARCH_EMBEDDINGS_KEY=... \
//	go test -run TestEvaluateEmbeddings -v ./internal/toolsearch
//
// TOOLSEARCH_EVAL_SET adds one more set (a file of testdata), to judge an untouched set with it.
func TestEvaluateEmbeddings(t *testing.T) {
	url, model := os.Getenv("TOOLSEARCH_EMBEDDINGS_URL"), os.Getenv("TOOLSEARCH_EMBEDDINGS_MODEL")
	if url == "" || model == "" {
		t.Skip("TOOLSEARCH_EMBEDDINGS_URL and TOOLSEARCH_EMBEDDINGS_MODEL name no endpoint")
	}
	dims, _ := strconv.Atoi(os.Getenv("TOOLSEARCH_EMBEDDINGS_DIMENSIONS"))
	cfg := embeddings.Config{URL: url, Model: model, Dimensions: dims, Timeout: time.Minute,
		BatchTimeout: 2 * time.Minute, MaxTextsPerMinute: math.MaxInt32}
	if err := cfg.Validate("endpoint"); err != nil {
		t.Fatal(err)
	}
	e := embeddings.New(cfg, os.Getenv("TOOLSEARCH_EMBEDDINGS_KEY"), embeddings.Deps{})
	defer e.Close()
	catalog := loadCatalog(t)
	docs := toolsOf(catalog)
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = EmbedText(d)
	}
	tools := embedAll(t, e, texts)
	ix := NewBM25(docs)
	files := make([]string, 0, len(evalFloors)+1)
	for _, f := range evalFloors {
		files = append(files, f.file)
	}
	if extra := os.Getenv("TOOLSEARCH_EVAL_SET"); extra != "" {
		files = append(files, extra)
	}
	t.Logf("| Set | Tasks | lexical (the gateway's) | dense alone | rrf (weight 1, K 60) | rrf (weight 0.5) | blend (weight 1) | blend (weight 0.25) |")
	t.Logf("|---|---|---|---|---|---|---|---|")
	for _, file := range files {
		qs := loadQueryFile(t, catalog, file)
		qtexts := make([]string, len(qs))
		for i, q := range qs {
			qtexts[i] = q.text
		}
		qvecs := embedAll(t, e, qtexts)
		line := file + " | " + strconv.Itoa(len(qs))
		for _, r := range denseRankers {
			res := rankDense(ix, catalog, qs, qvecs, tools, r)
			line += " | " + strconv.FormatFloat(res.r1, 'f', 3, 64) + " / " + strconv.FormatFloat(res.r5, 'f', 3, 64) + " / " + strconv.FormatFloat(res.mrr, 'f', 3, 64)
		}
		t.Logf("| %s |", line)
	}
}

// embedAll embeds texts through the endpoint (in batches, as the gateway embeds tools).
func embedAll(t *testing.T, e *embeddings.Embedder, texts []string) [][]float32 {
	t.Helper()
	v := e.Catalog(texts, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if !v.Wait(ctx) {
		t.Fatal("the endpoint did not embed every text within 10 minutes (see the log line for why)")
	}
	return v.Of()
}

// denseRanker is one column of TestEvaluateEmbeddings: lexical (no fusion), dense alone, or a
// fusion.
type denseRanker struct {
	lexical, alone bool
	d              Dense
}

var denseRankers = []denseRanker{
	{lexical: true},
	{alone: true},
	{d: Dense{Method: FuseRRF, Weight: 1}},
	{d: Dense{Method: FuseRRF, Weight: 0.5}},
	{d: Dense{Method: FuseBlend, Weight: 1}},
	{d: Dense{Method: FuseBlend, Weight: 0.25}},
}

// rankDense ranks each task with r, counted as rankWith counts.
func rankDense(ix *BM25, catalog []evalTool, qs []evalQuery, qvecs, tools [][]float32, r denseRanker) evalResult {
	var res evalResult
	for k, q := range qs {
		var hits []Hit
		switch {
		case r.lexical:
			hits = ix.Search(q.text, len(catalog), nil)
		case r.alone:
			hits = ix.denseAlone(qvecs[k], tools)
		default:
			d := r.d
			d.Query, d.Tools = qvecs[k], tools
			hits = ix.SearchFused(q.text, len(catalog), nil, d)
		}
		res.queries++
		for i, h := range hits {
			if slices.Contains(q.tools, catalog[h.Index].tool.Name) {
				if i == 0 {
					res.r1++
				}
				if i < 5 {
					res.r5++
				}
				res.mrr += 1 / float64(i+1)
				break
			}
		}
	}
	n := float64(max(res.queries, 1))
	res.r1, res.r5, res.mrr = res.r1/n, res.r5/n, res.mrr/n
	return res
}

// denseAlone ranks every slot of the catalog by cosine alone.
func (ix *BM25) denseAlone(q []float32, tools [][]float32) []Hit {
	sc := ix.getScratch()
	defer ix.scratch.Put(sc)
	v := ix.newView(nil, sc)
	cos := ix.cosines(&v, Dense{Query: q, Tools: tools})
	var hits []Hit
	for _, i := range ix.order(cos) {
		hits = append(hits, Hit{Index: i, Score: cos[i]})
	}
	return hits
}
