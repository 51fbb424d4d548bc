package toolsearch

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/embedtest"
)

// standInVectors are the stand-in embeddings (hashed character trigrams, embedtest.Vector) of
// each tool's EmbedText.
func standInVectors(docs []Tool) [][]float32 {
	out := make([][]float32, len(docs))
	for i, d := range docs {
		out[i] = embedtest.Vector(EmbedText(d), 128)
	}
	return out
}

func TestEmbedText(t *testing.T) {
	got := EmbedText(Tool{Name: "gh__createIssue", Title: "Create issue",
		Description: "Open a new issue in a GitHub repository. Needs a token.\nMore.",
		Params:      []Param{{"owner", "who"}, {"repo_name", "which"}}})
	want := "gh create Issue. Create issue. Open a new issue in a GitHub repository. Parameters: owner repo name"
	if got != want {
		t.Errorf("EmbedText:\n got %q\nwant %q", got, want)
	}
}

// TestFusedViewRanksAsIfAlone: a fused search over the tools a caller may see ranks exactly as
// one over an index and vectors of those tools alone, with either fusion: a hidden tool takes no
// rank in the dense list and no part in the blend's scaling.
func TestFusedViewRanksAsIfAlone(t *testing.T) {
	catalog := loadCatalog(t)
	docs := toolsOf(catalog)
	vecs := standInVectors(docs)
	full := NewBM25(docs)
	queries := loadQueries(t, catalog)[:40]
	rng := rand.New(rand.NewPCG(3, 4))
	for _, method := range []FusionMethod{FuseRRF, FuseBlend} {
		for round := range 4 {
			var keep []int
			visible := make([]bool, len(docs))
			share := 0.1 + 0.8*rng.Float64()
			for i := range docs {
				if rng.Float64() < share {
					keep = append(keep, i)
					visible[i] = true
				}
			}
			sub, subVecs := make([]Tool, len(keep)), make([][]float32, len(keep))
			for j, i := range keep {
				sub[j], subVecs[j] = docs[i], vecs[i]
			}
			alone := NewBM25(sub)
			for _, q := range queries {
				qv := embedtest.Vector(q.text, 128)
				got := full.SearchFused(q.text, 10, func(i int) bool { return visible[i] },
					Dense{Query: qv, Tools: vecs, Method: method, Weight: 1})
				want := alone.SearchFused(q.text, 10, nil, Dense{Query: qv, Tools: subVecs, Method: method, Weight: 1})
				for k := range want {
					want[k].Index = keep[want[k].Index]
					for m, s := range want[k].Similar {
						want[k].Similar[m] = keep[s]
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("method %d, round %d (%d of %d tools visible), %q:\n got %v\nwant %v", method, round, len(keep), len(docs), q.text, got, want)
				}
			}
		}
	}
}

// TestFusionChangesRanking: on the small catalog, a misspelled task no word of which the lexical
// ranker knows finds its tool through the stand-in vectors, with either fusion; a task the
// lexical ranker answers keeps its first tool under reciprocal-rank fusion; a tool without a
// vector (or of other dimensions) is ranked on its words alone.
func TestFusionChangesRanking(t *testing.T) {
	docs := smallCatalog()
	ix := NewBM25(docs)
	vecs := standInVectors(docs)
	name := func(hits []Hit) string {
		if len(hits) == 0 {
			return ""
		}
		return ix.names[hits[0].Index]
	}
	const typo = "scrennshot"
	if got := ix.Search(typo, 3, nil); len(got) != 0 {
		t.Fatalf("lexical ranking of %q: %v, want nothing (the test needs a task no word of which matches)", typo, got)
	}
	for _, m := range []FusionMethod{FuseRRF, FuseBlend} {
		d := Dense{Query: embedtest.Vector(typo, 128), Tools: vecs, Method: m, Weight: 1}
		if got := name(ix.SearchFused(typo, 3, nil, d)); got != "web-browser__take-screenshot" {
			t.Errorf("fusion %d of %q: first %q, want web-browser__take-screenshot", m, typo, got)
		}
	}
	q := "merge PR 12"
	d := Dense{Query: embedtest.Vector(q, 128), Tools: vecs, Method: FuseRRF, Weight: 1}
	if got, want := name(ix.SearchFused(q, 3, nil, d)), name(ix.Search(q, 3, nil)); got != want {
		t.Errorf("rrf of %q: first %q, lexical first %q", q, got, want)
	}
	// No vector for the screenshot tool, and one of other dimensions: the typo no longer finds it.
	partial := append([][]float32(nil), vecs...)
	partial[7] = nil
	d = Dense{Query: embedtest.Vector(typo, 128), Tools: partial, Method: FuseRRF, Weight: 1}
	for _, tools := range [][][]float32{partial, append(partial[:7:7], embedtest.Vector("x", 64))} {
		d.Tools = tools
		for _, h := range ix.SearchFused(typo, 13, nil, d) {
			if h.Index == 7 {
				t.Errorf("a tool without a usable vector was ranked on nothing: %v", h)
			}
		}
	}
}

// BenchmarkSearchFused is one find_tools ranking over the whole captured catalog fused with
// 1,536-dimension vectors (the size of common hosted models), each fusion; the query's vector is
// given (the endpoint's time is not the ranker's).
func BenchmarkSearchFused(b *testing.B) {
	catalog := loadCatalog(b)
	queries := loadQueries(b, catalog)
	docs := toolsOf(catalog)
	ix := NewBM25(docs)
	const dims = 1536
	vecs := make([][]float32, len(docs))
	for i, d := range docs {
		vecs[i] = embedtest.Vector(EmbedText(d), dims)
	}
	qvecs := make([][]float32, len(queries))
	for i, q := range queries {
		qvecs[i] = embedtest.Vector(q.text, dims)
	}
	for _, m := range []struct {
		name   string
		method FusionMethod
	}{{"rrf", FuseRRF}, {"blend", FuseBlend}} {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				k := i % len(queries)
				ix.SearchFused(queries[k].text, 10, nil, Dense{Query: qvecs[k], Tools: vecs, Method: m.method, Weight: 1})
			}
		})
	}
}
