package toolsearch

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Tool is what the ranker reads of one tool definition.
type Tool struct {
	// Name is the name the caller calls the tool by (the gateway's namespaced name).
	Name string
	// Title is the tool's human-readable title, from title or annotations.title.
	Title string
	// Description is the tool's description.
	Description string
	// Params are the top-level properties of the tool's input schema.
	Params []Param
}

// Param is one input parameter of a tool.
type Param struct {
	Name, Description string
}

// ParseTool reads a Tool from one item of a tools/list result.
func ParseTool(raw []byte) (Tool, error) {
	var d struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Annotations struct {
			Title string `json:"title"`
		} `json:"annotations"`
		InputSchema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		} `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return Tool{}, fmt.Errorf("toolsearch: reading a tool definition: %w", err)
	}
	t := Tool{Name: d.Name, Title: d.Title, Description: d.Description}
	if t.Title == "" {
		t.Title = d.Annotations.Title
	}
	for name, p := range d.InputSchema.Properties {
		t.Params = append(t.Params, Param{Name: name, Description: p.Description})
	}
	// Map order is random; the index must not depend on it.
	slices.SortFunc(t.Params, func(a, b Param) int { return strings.Compare(a.Name, b.Name) })
	return t, nil
}

// Hit is one ranked tool: its index in the catalog the ranker was built from, and its score,
// which is for tests and evaluation only (never shown to a caller).
type Hit struct {
	Index int
	Score float64
}

// Ranker ranks a fixed catalog of tools against queries. Implementations are safe for
// concurrent use once built.
type Ranker interface {
	// Search returns at most limit tools that allow accepts (nil: every tool), best first,
	// ties broken by name. A tool allow refuses is never returned and never displaces one it
	// accepts.
	Search(query string, limit int, allow func(i int) bool) []Hit
}

// Field weights of BM25F: a word in the name says most about what a tool does, one in a
// parameter's description least.
const (
	weightName      = 3.0
	weightTitle     = 2.0
	weightDesc      = 1.0
	weightParamName = 1.0
	weightParamDesc = 0.4
	bm25K1          = 1.2
	bm25B           = 0.75
)

// maxDescribeBytes is the description text read per tool: the opening says what it does.
const maxDescribeBytes = 2048

// BM25 is a BM25F ranker over a catalog of tools, built once per catalog version.
type BM25 struct {
	names    []string
	postings map[string][]posting
	docLen   []float64
	avgLen   float64
	vocab    []string // every indexed term, sorted, for prefix matches
}

// posting is one tool's weighted frequency of a term.
type posting struct {
	doc int32
	tf  float32
}

// NewBM25 indexes tools. Its cost is linear in the catalog's text; searches then touch only the
// postings of the query's terms.
func NewBM25(tools []Tool) *BM25 {
	ix := &BM25{names: make([]string, len(tools)), postings: map[string][]posting{}, docLen: make([]float64, len(tools))}
	total := 0.0
	tf := map[string]float64{}
	for i, t := range tools {
		ix.names[i] = t.Name
		clear(tf)
		add := func(text string, w float64) {
			for _, term := range Tokens(text) {
				tf[term] += w
				ix.docLen[i] += w
			}
		}
		add(t.Name, weightName)
		add(t.Title, weightTitle)
		add(truncate(t.Description, maxDescribeBytes), weightDesc)
		for _, p := range t.Params {
			add(p.Name, weightParamName)
			add(truncate(p.Description, maxDescribeBytes/4), weightParamDesc)
		}
		total += ix.docLen[i]
		terms := make([]string, 0, len(tf))
		for term := range tf {
			terms = append(terms, term)
		}
		sort.Strings(terms) // postings in a fixed order whatever the map's
		for _, term := range terms {
			ix.postings[term] = append(ix.postings[term], posting{doc: int32(i), tf: float32(tf[term])})
		}
	}
	if len(tools) > 0 {
		ix.avgLen = total / float64(len(tools))
	}
	ix.vocab = make([]string, 0, len(ix.postings))
	for term := range ix.postings {
		ix.vocab = append(ix.vocab, term)
	}
	sort.Strings(ix.vocab)
	return ix
}

// Len is the number of tools indexed.
func (ix *BM25) Len() int { return len(ix.names) }

// Search implements Ranker. Each word of the query scores a tool by its best match: the word
// itself, a synonym (synonymWeight) or, for a word of four letters or more, a longer indexed word
// it begins (prefixWeight: "mongo" meets "mongodb"). A tool's score is the sum over the query's
// words times the share of them it matches (Lucene's coordination factor), so a tool that covers
// "create" and "folder" outranks one that only shares a rare word with the query.
func (ix *BM25) Search(query string, limit int, allow func(i int) bool) []Hit {
	if limit <= 0 || len(ix.names) == 0 {
		return nil
	}
	words := uniqueTokens(query)
	if len(words) == 0 {
		return nil
	}
	n := len(ix.names)
	scores := make([]float64, n)
	matched := make([]uint8, n)
	best := make([]float64, n)
	var touched []int32
	for _, w := range words {
		touched = touched[:0]
		for _, e := range ix.expand(w) {
			ps := ix.postings[e.term]
			idf := math.Log(1 + (float64(n)-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
			for _, p := range ps {
				tf := float64(p.tf)
				norm := bm25K1 * (1 - bm25B + bm25B*ix.docLen[p.doc]/ix.avgLen)
				v := e.weight * idf * tf * (bm25K1 + 1) / (tf + norm)
				if best[p.doc] == 0 {
					touched = append(touched, p.doc)
				}
				best[p.doc] = max(best[p.doc], v)
			}
		}
		for _, d := range touched {
			scores[d] += best[d]
			matched[d]++
			best[d] = 0
		}
	}
	hits := make([]Hit, 0, 16)
	for i, s := range scores {
		if s > 0 && (allow == nil || allow(i)) {
			hits = append(hits, Hit{Index: i, Score: s * math.Pow(float64(matched[i])/float64(len(words)), coordPower)})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(ix.names[a.Index], ix.names[b.Index])
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// expansion is one indexed term a query word looks for, and its weight.
type expansion struct {
	term   string
	weight float64
}

// expand lists what word looks for, in a fixed order: itself, its synonyms, the longer indexed
// words it begins.
func (ix *BM25) expand(w string) []expansion {
	out := []expansion{{w, 1}}
	for _, s := range synonyms[w] {
		out = append(out, expansion{s, synonymWeight})
	}
	if len(w) >= minPrefix {
		i := sort.SearchStrings(ix.vocab, w)
		for ; i < len(ix.vocab) && strings.HasPrefix(ix.vocab[i], w); i++ {
			if ix.vocab[i] != w {
				out = append(out, expansion{ix.vocab[i], prefixWeight})
			}
		}
	}
	return out
}

// Weights of the query side.
const (
	// prefixWeight is the weight of an indexed word that a query word begins.
	prefixWeight = 0.5
	// coordPower is how strongly the share of query words a tool matches scales its score.
	coordPower = 1.0
)

// minPrefix is the shortest query word matched as a prefix: shorter ones begin too many words.
const minPrefix = 4

// uniqueTokens are the query's terms, each once, in order.
func uniqueTokens(query string) []string {
	var out []string
	for _, t := range Tokens(query) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
