package toolsearch

import (
	"cmp"
	"math"
	"slices"
)

// Near-duplicates. A backend can list a copy of another backend's tool (its description, a name
// like it) to be chosen instead of it: with ten copies whose names hold more of the query's words,
// the original drops out of the first results. Search therefore links, once per catalog version,
// each tool to the tools of other backends that nearly duplicate it, and gives every group of
// near-duplicates one place in a ranking: that of the member listed first, the tool of the
// backend configured first (the catalog is in configuration order), ranked on its own text as if
// the others did not exist. The others are named in its slot (Hit.Similar), take no slot of their
// own and weigh nothing in the statistics, so neither ten copies nor copies whose names are
// stuffed with common words change a ranking. Pinning's shadows class, when pins are on, blocks
// such copies outright; this holds without pins.

// Thresholds of "nearly duplicates", over the sets of distinct words (stemmed, function words
// dropped) of two descriptions A and B, A the smaller:
const (
	// dupJaccard: |A∩B| / |A∪B| at least this, A of two words or more, is a copy with a few
	// words changed.
	dupJaccard = 0.8
	// dupContained: |A∩B| / |A| at least this, A of dupContainedWords words or more, is a copy
	// with text added before or after it.
	dupContained      = 0.9
	dupContainedWords = 3
	// A shorter description says too little alone: A wholly within B is a copy when the words
	// of one backend-side name are all in the other (create_issue, createIssues, issue_create_v2).
)

// dupMinShare is the least |A∩B| / |A| any rule accepts (Jaccard 0.8 implies it): candidates
// are found with it.
const dupMinShare = 0.8

// maxSimilar bounds Hit.Similar: a slot names a few of its near-duplicates, however many exist.
const maxSimilar = 3

// dupDoc is what near-duplicate detection reads of a tool.
type dupDoc struct {
	words   []int32  // distinct description words, ascending ids
	name    []string // backend-side name's distinct words, sorted
	backend string
}

// nearDuplicates returns, per tool, the tools of other backends that nearly duplicate it,
// ascending. Candidates are found with the prefix filter of set-similarity joins: two sets
// sharing a share s of the smaller one's n words share one of its rarest n-ceil(s*n)+1 words,
// so only the postings of those words are read, not every pair.
func nearDuplicates(tools []Tool) [][]int32 {
	docs, df := dupDocs(tools)
	post := make([][]int32, len(df))
	for i, d := range docs {
		for _, w := range d.words {
			post[w] = append(post[w], int32(i))
		}
	}
	dups := make([][]int32, len(tools))
	seen := make([]int32, len(tools)) // the last a+1 that checked each tool
	for a, da := range docs {
		n := len(da.words)
		if n == 0 {
			continue
		}
		rare := slices.Clone(da.words)
		slices.SortFunc(rare, func(x, y int32) int { return cmp.Or(cmp.Compare(df[x], df[y]), cmp.Compare(x, y)) })
		for _, w := range rare[:n-int(math.Ceil(dupMinShare*float64(n)))+1] {
			for _, b := range post[w] {
				db := &docs[b]
				if seen[b] == int32(a)+1 || int(b) == a || len(db.words) < n || (len(db.words) == n && int(b) < a) {
					continue
				}
				seen[b] = int32(a) + 1
				if db.backend != da.backend && nearlySame(&da, db) {
					dups[a] = append(dups[a], b)
					dups[b] = append(dups[b], int32(a))
				}
			}
		}
	}
	for _, d := range dups {
		slices.Sort(d)
	}
	return dups
}

// dupDocs reads each tool's description words (as ids) and backend-side name, and counts in how
// many descriptions each word is.
func dupDocs(tools []Tool) ([]dupDoc, []int) {
	ids := map[string]int32{}
	var df []int
	docs := make([]dupDoc, len(tools))
	for i, t := range tools {
		d := dupDoc{backend: t.Backend, name: nameWords(t)}
		for _, term := range Tokens(truncate(t.Description, maxDescribeBytes)) {
			id, ok := ids[term]
			if !ok {
				id = int32(len(df))
				ids[term] = id
				df = append(df, 0)
			}
			if !slices.Contains(d.words, id) {
				d.words = append(d.words, id)
				df[id]++
			}
		}
		slices.Sort(d.words)
		docs[i] = d
	}
	return docs, df
}

// nameWords are the distinct words of the tool's backend-side name, sorted: Name without the
// leading words of its backend's name (the namespace), so create_issue, createIssue and
// issue-create meet.
func nameWords(t Tool) []string {
	words := Tokens(t.Name)
	if prefix := Tokens(t.Backend); len(prefix) < len(words) && slices.Equal(words[:len(prefix)], prefix) {
		words = words[len(prefix):]
	}
	slices.Sort(words)
	return slices.Compact(words)
}

// nearlySame applies the thresholds to two tools, a's description being the smaller.
func nearlySame(a, b *dupDoc) bool {
	inter := intersection(a.words, b.words)
	n, union := len(a.words), len(a.words)+len(b.words)-inter
	switch {
	case n >= 2 && float64(inter) >= dupJaccard*float64(union):
		return true
	case n >= dupContainedWords && float64(inter) >= dupContained*float64(n):
		return true
	case inter < n:
		return false
	}
	if len(a.name) > len(b.name) {
		a, b = b, a
	}
	return len(a.name) > 0 && intersection(a.name, b.name) == len(a.name)
}

// intersection is the size of the intersection of two sorted sets.
func intersection[T cmp.Ordered](a, b []T) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// groups marks, in v, the tools a search ranks: of each group of visible near-duplicates, the one
// listed first. The others are recorded as its Similar. A tool's group is found through visible
// tools only (the earliest visible near-duplicate listed before it, and so on), so a hidden tool
// neither joins two visible ones nor is ever shown.
func (ix *BM25) groups(v *view) {
	if len(ix.withDups) == 0 {
		return
	}
	root := make([]int32, len(ix.dups)) // a visible tool's group, +1; 0: none yet
	for _, d := range ix.withDups {
		if !v.ranked[d] {
			continue
		}
		r := d
		for _, e := range ix.dups[d] {
			if e >= d {
				break
			}
			if root[e] > 0 {
				r = root[e] - 1
				break
			}
		}
		root[d] = r + 1
		if r != d {
			v.ranked[d] = false
			if v.similar == nil {
				v.similar = map[int32][]int{}
			}
			if len(v.similar[r]) < maxSimilar {
				v.similar[r] = append(v.similar[r], int(d))
			}
		}
	}
}
