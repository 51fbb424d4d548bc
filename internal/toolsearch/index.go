package toolsearch

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Tool is what the ranker reads of one tool definition.
type Tool struct {
	// Name is the name the caller calls the tool by (the gateway's namespaced name).
	Name string
	// Title is the tool's human-readable title, from title or annotations.title.
	Title string
	// AnnotationsTitle is annotations.title even when title is set: what a host that reads no
	// title (MCP 2025-03-26 has none) shows the tool by.
	AnnotationsTitle string
	// Description is the tool's description.
	Description string
	// Params are the top-level properties of the tool's input schema.
	Params []Param
	// Backend is the backend that serves the tool. Near-duplicate tools are collapsed only
	// across backends, and a backend-side name is Name without Backend's leading words.
	Backend string
}

// Param is one input parameter of a tool.
type Param struct {
	Name, Description string
}

// ParseTool reads a Tool from one item of a tools/list result. A definition that spells a
// member ParseTool reads in two ways (twice, or once more in another case or punctuation, which
// one client decoder takes for the member and another ignores) is refused: clients would read
// different text from it, and search ranks and compares tools only on the text every client
// reads.
func ParseTool(raw []byte) (Tool, error) {
	var d struct {
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		Annotations json.RawMessage `json:"annotations"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return Tool{}, fmt.Errorf("toolsearch: reading a tool definition: %w", err)
	}
	if err := spelledOnce(raw, "name", "title", "description", "annotations", "inputSchema"); err != nil {
		return Tool{}, err
	}
	t := Tool{Name: d.Name, Title: d.Title, Description: d.Description}
	if isObject(d.Annotations) {
		var a struct {
			Title string `json:"title"`
		}
		if json.Unmarshal(d.Annotations, &a) == nil {
			if err := spelledOnce(d.Annotations, "title"); err != nil {
				return Tool{}, err
			}
			t.AnnotationsTitle = a.Title
			if t.Title == "" {
				t.Title = a.Title
			}
		}
	}
	params, err := readParams(d.InputSchema)
	if err != nil {
		return Tool{}, err
	}
	t.Params = params
	return t, nil
}

// readParams reads the top-level properties of an input schema, each with its description,
// sorted by name (the index must not depend on the order of a map).
func readParams(schema json.RawMessage) ([]Param, error) {
	if !isObject(schema) {
		return nil, nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil, nil
	}
	if err := spelledOnce(schema, "properties"); err != nil {
		return nil, err
	}
	var out []Param
	for name, p := range s.Properties {
		var v struct {
			Description string `json:"description"`
		}
		if !isObject(p) || json.Unmarshal(p, &v) != nil {
			v.Description = ""
		} else if err := spelledOnce(p, "description"); err != nil {
			return nil, err
		}
		out = append(out, Param{Name: name, Description: v.Description})
	}
	slices.SortFunc(out, func(a, b Param) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// spelledOnce refuses an object in which a member named like one of fields appears twice, or
// in another spelling jsonrpc.FoldEqual takes for the same name (case, '_' and '-').
func spelledOnce(obj []byte, fields ...string) error {
	seen := make([]bool, len(fields))
	return jsonrpc.Members(obj, func(k, _ []byte) error {
		for i, f := range fields {
			if !jsonrpc.FoldEqual(k, []byte(f)) {
				continue
			}
			if seen[i] || string(k) != f {
				return fmt.Errorf("toolsearch: a tool definition spells %q more than one way", f)
			}
			seen[i] = true
		}
		return nil
	})
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	i := 0
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i < len(raw) && raw[i] == '{'
}

// Hit is one ranked slot: the tool shown in it, by its index in the catalog the ranker was
// built from, and its score, which is for tests and evaluation only (never shown to a caller).
type Hit struct {
	Index int
	Score float64
	// Similar are near-duplicates of the tool from other backends that the query matched too,
	// collapsed into this slot (the most maxSimilar, best first): they never take a slot of
	// their own, so cloning a tool cannot push it down the list.
	Similar []int
}

// Ranker ranks a fixed catalog of tools against queries. Implementations are safe for
// concurrent use once built.
type Ranker interface {
	// Search returns at most limit slots of the tools allow accepts (nil: every tool), best
	// first, ties broken by name. The ranking is computed over the accepted tools only, as if
	// the catalog held nothing else: a tool allow refuses is never returned, never displaces
	// one it accepts, and its words weigh nothing. allow is called once per tool.
	Search(query string, limit int, allow func(i int) bool) []Hit
}

// The fields of a tool BM25F reads, each with its weight and length normalisation: a word in
// the name says most about what a tool does, one in a parameter's description least. Each field
// is normalised by its own length against the mean of that field, so a tool's long parameter
// list does not dilute a match in its name.
const (
	fieldName      = iota // the namespaced name, split into words
	fieldTitle            // title or annotations.title
	fieldLead             // the description's first sentence
	fieldRest             // the rest of the description
	fieldParamName        // the input schema's top-level property names
	fieldParamDesc        // and their descriptions
	numFields
)

var (
	fieldWeight = [numFields]float64{3, 2, 1, 0.15, 0.5, 0.4}
	fieldB      = [numFields]float64{0.75, 0.75, 0.75, 0.75, 0.75, 0.75}
)

// bm25K1 is BM25's term-frequency saturation.
const bm25K1 = 1.2

// maxDescribeBytes is the description text read per tool: the opening says what it does.
const maxDescribeBytes = 2048

// BM25 is a BM25F ranker over a catalog of tools, built once per catalog version. It keeps
// per-tool term frequencies and field lengths only: every statistic over the catalog (how many
// tools hold a word, the mean length of a field) is computed per search over the tools the
// caller may see.
type BM25 struct {
	names    []string
	postings map[string][]posting
	fieldLen [][numFields]float32 // per tool
	vocab    []string             // every indexed term, sorted, for prefix matches
	// dups are, per tool, the earliest tools of other backends listed before it that nearly
	// duplicate it, ascending; withDups the tools linked either way, ascending.
	dups     [][]int32
	withDups []int32
	// backend is each tool's backend, as an id; backendWords the ids of the backends whose
	// name holds a word.
	backend      []int32
	backendWords map[string][]int32
	// actions are what each tool says it does (actions.go).
	actions []action
	// vec is what word vectors add (wordvec.go); nil: none, as NewBM25 builds.
	vec *vectorIndex
	// thesaurus is what a table of related words adds (wordnet.go); nil: none, as NewBM25 builds.
	thesaurus *thesaurus
	// scratch holds per-search buffers of one entry per tool, reused across searches.
	scratch sync.Pool
}

// posting is how often one tool holds a term, per field.
type posting struct {
	doc int32
	tf  [numFields]uint8 // saturates at 255, far beyond where BM25 stops counting
}

// NewBM25 indexes tools. Its cost is linear in the catalog's text, plus finding near-duplicates
// (dupes.go); searches then touch only the postings of the query's terms.
func NewBM25(tools []Tool) *BM25 { return newBM25(tools, nil) }

// newBM25 indexes tools, with word vectors used as vr says (nil: none).
func newBM25(tools []Tool, vr *vectorRanking) *BM25 {
	ix := &BM25{names: make([]string, len(tools)), postings: map[string][]posting{}, fieldLen: make([][numFields]float32, len(tools)), actions: make([]action, len(tools))}
	ix.vec = newVectorIndex(vr, len(tools))
	tf := map[string]*[numFields]uint8{}
	for i, t := range tools {
		ix.names[i] = t.Name
		clear(tf)
		ix.actions[i] = ix.countTerms(i, t, tf)
		splitNameWords(tf, &ix.fieldLen[i])
		for _, term := range slices.Sorted(maps.Keys(tf)) { // postings in a fixed order whatever the map's
			ix.postings[term] = append(ix.postings[term], posting{doc: int32(i), tf: *tf[term]})
		}
	}
	ix.vocab = slices.Sorted(maps.Keys(ix.postings))
	if ix.vec != nil {
		ix.vec.indexTerms(ix.vocab)
	}
	ix.indexBackends(tools)
	ix.dups = nearDuplicates(tools)
	linked := make([]bool, len(tools))
	for i, d := range ix.dups {
		for _, e := range d {
			linked[i], linked[e] = true, true
		}
	}
	for i, l := range linked {
		if l {
			ix.withDups = append(ix.withDups, int32(i))
		}
	}
	return ix
}

// countTerms counts, per field, the terms of tool i (t) into tf and its field lengths, and
// returns what the tool says it does.
func (ix *BM25) countTerms(i int, t Tool, tf map[string]*[numFields]uint8) action {
	addTerms := func(terms []string, f int) {
		for _, term := range terms {
			c := tf[term]
			if c == nil {
				c = new([numFields]uint8)
				tf[term] = c
			}
			c[f] = min(c[f]+1, 255)
			ix.fieldLen[i][f]++
		}
	}
	add := func(text string, f int) { addTerms(Tokens(text), f) }
	nameTerms := Tokens(t.Name)
	addTerms(nameTerms, fieldName)
	titleTerms := Tokens(t.Title)
	addTerms(titleTerms, fieldTitle)
	lead, rest := leadSentence(truncate(t.Description, maxDescribeBytes))
	leadTerms := Tokens(lead)
	if ix.vec != nil {
		ix.vec.embed(i, nameTerms, titleTerms, leadTerms)
	}
	addTerms(leadTerms, fieldLead)
	add(rest, fieldRest)
	for _, p := range t.Params {
		add(p.Name, fieldParamName)
		add(truncate(p.Description, maxDescribeBytes/4), fieldParamDesc)
	}
	skip := 0 // the backend's words that begin the namespaced name
	if t.Backend != "" && strings.HasPrefix(t.Name, t.Backend) {
		skip = len(Tokens(t.Backend))
	}
	return toolAction(nameTerms, skip, leadTerms)
}

// splitNameWords adds to a tool's name the words its run-together name words are made of
// (heapsnapshot, desktopcommander, sequentialthinking), when the tool's own text or the word
// table holds both: a user writes "heap snapshot". Only the tool's own text is read, so how one
// tool is indexed never depends on another (which a caller may not see).
func splitNameWords(tf map[string]*[numFields]uint8, lens *[numFields]float32) {
	known := func(w string) bool {
		c, ok := tf[w]
		return ok && c != nil || len(synonyms[w]) > 0 || actionWords[w] != 0
	}
	var parts []string
	for term, c := range tf {
		if c[fieldName] == 0 || len(term) < minSplitWord {
			continue
		}
		for cut := len(term) - minSplitPart; cut >= minSplitPart; cut-- {
			if a, b := term[:cut], term[cut:]; known(a) && known(b) {
				parts = append(parts, a, b)
				break
			}
		}
	}
	for _, w := range parts {
		c := tf[w]
		if c == nil {
			c = new([numFields]uint8)
			tf[w] = c
		}
		c[fieldName] = min(c[fieldName]+1, 255)
		lens[fieldName]++
	}
}

// minSplitWord is the shortest word splitNameWords cuts, minSplitPart the shortest part: shorter
// words (github) are seldom written apart.
const (
	minSplitWord = 8
	minSplitPart = 3
)

// indexBackends numbers the tools' backends and indexes the words of their names.
func (ix *BM25) indexBackends(tools []Tool) {
	ids := map[string]int32{}
	ix.backend = make([]int32, len(tools))
	ix.backendWords = map[string][]int32{}
	for i, t := range tools {
		id, ok := ids[t.Backend]
		if !ok {
			id = int32(len(ids))
			ids[t.Backend] = id
			for _, w := range Tokens(t.Backend) {
				ix.backendWords[w] = append(ix.backendWords[w], id)
			}
		}
		ix.backend[i] = id
	}
}

// Len is the number of tools indexed.
func (ix *BM25) Len() int { return len(ix.names) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// leadSentence splits a description after its first sentence, which says what the tool does;
// the rest (usage notes, caveats, examples) says less about which task it fits.
func leadSentence(desc string) (lead, rest string) {
	desc = strings.TrimSpace(desc)
	for i := 0; i < len(desc); i++ {
		switch {
		case desc[i] == '\n':
			return desc[:i], desc[i:]
		case desc[i] == '.' && (i+1 == len(desc) || desc[i+1] == ' ' || desc[i+1] == '\n'):
			return desc[:i], desc[i:]
		}
	}
	return desc, ""
}
