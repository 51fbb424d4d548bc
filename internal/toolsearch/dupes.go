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

// Bounds on finding near-duplicates, so that a catalog of many copies (a backend listing
// thousands of tools with one description) costs linear time, not quadratic: each tool keeps its
// maxDupLinks earliest near-duplicates listed before it (a group is shown as its earliest visible
// member, so later ones are never needed), reads at most dupScanPerWord postings per word and
// compares at most dupVerify candidates. Copies are found earliest first, so the original of a
// copy, listed before it, is never crowded out by other copies. maxDupLinks is as many as a
// tool can read candidates of one word: a caller who may not see a copy's first few
// near-duplicates (their backends are hidden from it) must still find the earliest one it sees
// among the links, or the copy would take a slot of its own in its view and not in an index of
// its tools alone. A search reads the links only up to the first visible one.
//
// The bounds are applied over the whole catalog, the tools a caller may not see included, since
// the links are computed once per version: 32 tools listed before two near-duplicates that fill
// the later one's links, or the first postings of each word its candidates are gathered from
// (gather), keep the two apart, and a caller who sees both sees two slots even if it sees none
// of the 32. Hidden tools so decide only whether two visible ones share a slot; deciding it per
// view would cost the quadratic comparison the bounds avoid. docs/search.md states the case.
const (
	maxDupLinks    = 32
	dupScanPerWord = 32
	dupVerify      = 128
)

// nearDuplicates returns, per tool, its earliest near-duplicates of other backends listed before
// it (at most maxDupLinks), ascending. Exact copies (the same set of words) are found by their
// set; other candidates with the prefix filter of set-similarity joins: two sets sharing a share
// s of the smaller one's n words share one of its rarest n-ceil(s*n)+1 words (its prefix). For a
// tool, the candidates listed before it are those holding a word of its prefix (it is the
// smaller) and those with a word of it in their prefix (they are).
func nearDuplicates(tools []Tool) [][]int32 {
	docs, df := dupDocs(tools)
	post := make([][]int32, len(df))  // docs holding a word, ascending
	ppost := make([][]int32, len(df)) // docs holding a word in their prefix, ascending
	prefixes := make([][]int32, len(docs))
	for i, d := range docs {
		prefixes[i] = prefix(d.words, df)
		for _, w := range d.words {
			post[w] = append(post[w], int32(i))
		}
		for _, w := range prefixes[i] {
			ppost[w] = append(ppost[w], int32(i))
		}
	}
	// Exact copies are candidates like the others, not links of their own: a tool's links are
	// its earliest near-duplicates of every kind, so copies that are exact copies of each other
	// never crowd out an original they only nearly copy, listed before them.
	exact := make([][]int32, len(tools))
	exactCopies(docs, exact)
	dups := make([][]int32, len(tools))
	seen := make([]int32, len(tools)) // the last d+1 that considered each tool
	var cands []int32
	for d := range docs {
		if len(docs[d].words) == 0 {
			continue
		}
		cands = cands[:0]
		for _, e := range exact[d] {
			seen[e] = int32(d) + 1
			cands = append(cands, e)
		}
		gather := func(ids []int32) {
			for k, e := range ids {
				if k == dupScanPerWord || int(e) >= d {
					return
				}
				if seen[e] != int32(d)+1 {
					seen[e] = int32(d) + 1
					cands = append(cands, e)
				}
			}
		}
		for _, w := range prefixes[d] {
			gather(post[w])
		}
		for _, w := range docs[d].words {
			gather(ppost[w])
		}
		slices.Sort(cands)
		linkEarliest(docs, dups, d, cands, exact[d])
	}
	return dups
}

// prefix is the rarest words of a set (ties by id) that the prefix filter reads.
func prefix(words []int32, df []int) []int32 {
	n := len(words)
	if n == 0 {
		return nil
	}
	rare := slices.Clone(words)
	slices.SortFunc(rare, func(x, y int32) int { return cmp.Or(cmp.Compare(df[x], df[y]), cmp.Compare(x, y)) })
	return rare[:n-int(math.Ceil(dupMinShare*float64(n)))+1]
}

// exactCopies finds, for each tool, the earliest tools of other backends listed before it with
// the same set of words (at most maxDupLinks), reading at most dupScanPerWord of them per tool.
func exactCopies(docs []dupDoc, dups [][]int32) {
	sets := map[string][]int32{}
	for i, d := range docs {
		if len(d.words) > 0 {
			k := setKey(d.words)
			sets[k] = append(sets[k], int32(i))
		}
	}
	for _, members := range sets {
		for i, d := range members {
			for k, e := range members[:i] {
				if k == dupScanPerWord || len(dups[d]) == maxDupLinks {
					break
				}
				if docs[e].backend != docs[d].backend {
					dups[d] = append(dups[d], e)
				}
			}
		}
	}
}

// setKey is a map key for a set of word ids.
func setKey(words []int32) string {
	b := make([]byte, 0, 4*len(words))
	for _, w := range words {
		b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	return string(b)
}

// linkEarliest links d to the earliest of cands (ascending, all listed before it) that nearly
// duplicate it or are among its exact copies, until d has maxDupLinks, comparing at most
// dupVerify of them.
func linkEarliest(docs []dupDoc, dups [][]int32, d int, cands, exact []int32) {
	dd := &docs[d]
	for k, e := range cands {
		if k == dupVerify || len(dups[d]) == maxDupLinks {
			break
		}
		de := &docs[e]
		if de.backend == dd.backend || slices.Contains(dups[d], e) {
			continue
		}
		small, large := dd, de
		if len(de.words) < len(dd.words) {
			small, large = de, dd
		}
		if slices.Contains(exact, e) || nearlySame(small, large) {
			dups[d] = append(dups[d], e)
		}
	}
	slices.Sort(dups[d])
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
