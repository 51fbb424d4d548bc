package pins

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/mcp-gateway/gateway/internal/resuri"
)

// Tool shadowing: a backend that lists a copy of another backend's tool (the same description,
// a name that differs by a separator, the word order or one typo) can take the original's calls
// or rank above it in a search. A tool that is not pinned is compared with the pinned tools of
// the other pinned backends once per list fetch; a near duplicate is flagged ClassShadows,
// naming the tool it shadows. Prompts are compared so too, with prompts only (ShadowKind): a
// host offers them to the user as commands by their title or name, so a copy of a pinned
// prompt takes the user's choice of it. The measure is deterministic and cheap (map lookups):
//
//   - both are read as a model reads them, not by their code points: compatibility forms
//     (fullwidth and mathematical letters, ligatures) normalised (NFKC) and case folded
//     (foldText), so "ｒｅａｄ＿ｆｉｌｅ" or "𝐫𝐞𝐚𝐝𝐅𝐢𝐥𝐞" is "read_file", and letters of
//     any script that look like Latin letters or digits mapped to those (latinSkeleton, after
//     Unicode's confusables data), so "rеаd_filе" with Cyrillic е and а is "read_file" too;
//   - names: the name split into lower-case word tokens (at any character that is not a letter
//     or digit, at lower→upper case changes and at letter↔digit changes), the look-alikes
//     within Latin and digits read as one (latinFamilies: 0 o, 1 i l, rn m, vv w, cl d). Two
//     names are near duplicates when their tokens are the same multiset ("read_file",
//     "readFile", "file-read"), when their tokens joined are equal ("l0g" and "log"), or when
//     those are at least shadowMinTypo characters long and equal after deleting at most one
//     character from each ("read_file" and "raed_file", "read_files");
//   - shown names: the name a host shows the tool by (its title, else its annotations' title,
//     else its name; shownName), as name tokens: two tools shown alike ("Read project file"
//     and "read-project-FILE", or a title and a name) are near duplicates to the user;
//   - descriptions: the description's lower-case words (runs of letters and digits) as word
//     bigrams. Two descriptions of at least shadowMinWords words are near duplicates when at
//     least shadowOverlap of the shorter one's bigrams are in the other's (the overlap
//     coefficient): a copied description stays a duplicate when text is added around it.
const (
	shadowMinTypo  = 6
	shadowMinWords = 6
	shadowOverlap  = 0.8
)

// ShadowKind reports whether items of kind are compared for shadowing: tools and prompts, each
// with the pinned items of its own kind only (a prompt never shadows a tool, nor the reverse).
// A backend whose pinning is off has its items of these kinds judged for shadowing alone
// (Guard.JudgesShadows).
func ShadowKind(kind Kind) bool { return kind == KindTool || kind == KindPrompt }

// shadowKinds lists the kinds ShadowKind admits, in the order Shadowing reports them.
func shadowKinds() []Kind { return []Kind{KindTool, KindPrompt} }

// shadowSig is what shadowing compares of one tool or prompt.
type shadowSig struct {
	tokens  string   // name tokens, sorted, joined with spaces
	joined  string   // name tokens in order, concatenated
	shown   string   // the tokens of the name a host shows (shownName), sorted, joined with spaces
	bigrams []string // description word bigrams, distinct
}

func itemSig(d *Definition) shadowSig {
	obj, _ := d.Value.(map[string]any)
	desc, _ := obj["description"].(string)
	// The joined name is read as a whole: "c1ose" is the words c, 1, ose, and reads as close.
	joined := latinFamilies(strings.Join(nameTokens(d.Key), ""))
	tokens, shown := sortedTokens(d.Key), sortedTokens(shownName(d, obj))
	return shadowSig{tokens: tokens, joined: joined, shown: shown, bigrams: wordBigrams(desc)}
}

// shownName is the name a host shows a tool by, in its tool list and when it asks the user to
// confirm a call: its title, else the title in its annotations, else its name
// (https://modelcontextprotocol.io/specification/2026-07-28/server/tools, display name
// precedence). A prompt, which has no annotations, is shown by its title, else its name.
func shownName(d *Definition, obj map[string]any) string {
	if title, _ := obj["title"].(string); title != "" {
		return title
	}
	ann, _ := obj["annotations"].(map[string]any)
	if title, _ := ann["title"].(string); title != "" {
		return title
	}
	return d.Key
}

// sortedTokens is the name tokens of s as a reader takes them (nameTokens, latinFamilies),
// sorted and joined with spaces.
func sortedTokens(s string) string {
	toks := nameTokens(s)
	for i, t := range toks {
		toks[i] = latinFamilies(t)
	}
	sort.Strings(toks)
	return strings.Join(toks, " ")
}

// foldText is s in NFKC form and case folded (NFKC_Casefold, but for default-ignorable code
// points, which are findings of their own): the spellings a reader cannot tell apart read alike.
// ASCII text, most names and descriptions, is its own NFKC form and folds to its lower case,
// which strings.ToLower gives without building a caser per call.
func foldText(s string) string {
	if resuri.IsASCII(s) {
		return strings.ToLower(s)
	}
	return foldUnicode(s)
}

// foldUnicode is foldText for any text.
func foldUnicode(s string) string {
	return norm.NFKC.String(cases.Fold().String(norm.NFKC.String(s)))
}

// NameWords are the words a reader takes a tool name for, whatever its spelling: case folded,
// look-alike letters of other scripts read as Latin, full-width and other compatibility forms as
// their plain letters, every other character (separators, invisible ones) a break between
// words. "Find_Tools", "find-tools" and "find_tооls" (Cyrillic о) are find, tools.
func NameWords(name string) []string { return nameTokens(name) }

// nameTokens splits a tool name into case-folded word tokens: split on its NFKC form with
// look-alike letters mapped to Latin (latinSkeleton), whose letters still carry their case,
// each token folded.
func nameTokens(name string) []string {
	name = latinSkeleton(name)
	var toks []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			toks = append(toks, foldText(string(cur)))
			cur = cur[:0]
		}
	}
	prev := rune(0)
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case len(cur) > 0 && ((unicode.IsUpper(r) && unicode.IsLower(prev)) || unicode.IsDigit(r) != unicode.IsDigit(prev)):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return toks
}

// latinFamilies reads a case-folded word of a name as a reader does who cannot tell apart the
// look-alikes within Latin letters and digits: 0 as o, 1 and i as l (a capital I, which folds
// to i, reads as l), rn as m, vv as w and cl as d. So "fi1e_reader", "Iist_files" (capital I),
// "get_rnodel" and "c1ose" compare as "file_reader", "list_files", "get_model" and "close"; the
// first three pairs come from the ASCII rows of Unicode's confusables data (confusables.txt),
// vv and cl are added. Two real tools whose names differ only so ("modem" and "modern") read
// alike too: the one not pinned shadows the other, as any near duplicate does.
func latinFamilies(w string) string {
	if !strings.ContainsAny(w, "01icrv") {
		return w
	}
	w = strings.Map(func(r rune) rune {
		switch r {
		case '0':
			return 'o'
		case '1', 'i':
			return 'l'
		}
		return r
	}, w)
	if !strings.Contains(w, "rn") && !strings.Contains(w, "vv") && !strings.Contains(w, "cl") {
		return w
	}
	var b strings.Builder
	b.Grow(len(w))
	for i := 0; i < len(w); i++ {
		switch {
		case strings.HasPrefix(w[i:], "rn"):
			b.WriteByte('m')
		case strings.HasPrefix(w[i:], "vv"):
			b.WriteByte('w')
		case strings.HasPrefix(w[i:], "cl"):
			b.WriteByte('d')
		default:
			b.WriteByte(w[i])
			continue
		}
		i++
	}
	return b.String()
}

// wordBigrams returns the distinct bigrams of the description's lower-case words (look-alike
// letters mapped to Latin), none when it has fewer than shadowMinWords words.
func wordBigrams(desc string) []string {
	words := strings.FieldsFunc(foldText(latinSkeleton(desc)), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) < shadowMinWords {
		return nil
	}
	seen := make(map[string]bool, len(words))
	out := make([]string, 0, len(words)-1)
	for i := 1; i < len(words); i++ {
		b := words[i-1] + " " + words[i]
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	return out
}

// oneDeletion lists s and every string made by deleting one character of s.
func oneDeletion(s string) []string {
	r := []rune(s)
	out := []string{s}
	for i := range r {
		out = append(out, string(r[:i])+string(r[i+1:]))
	}
	return out
}

// shadowIndex holds the signatures of one backend's pinned tools, or prompts, for lookups.
type shadowIndex struct {
	byTokens  map[string][]string        // sorted name tokens → tool keys
	byVariant map[string][]string        // joined name or a one-deletion variant → tool keys
	byJoined  map[string][]string        // joined name, of any length → tool keys
	byShown   map[string][]string        // tokens of the shown name → tool keys
	byBigram  map[string][]string        // description bigram → tool keys
	bigrams   map[string]map[string]bool // tool key → its bigrams
}

func newShadowIndex(tools map[string]*Definition) *shadowIndex {
	x := &shadowIndex{byTokens: map[string][]string{}, byVariant: map[string][]string{}, byJoined: map[string][]string{},
		byShown: map[string][]string{}, byBigram: map[string][]string{}, bigrams: map[string]map[string]bool{}}
	for key, d := range tools {
		sig := itemSig(d)
		if sig.tokens != "" {
			x.byTokens[sig.tokens] = append(x.byTokens[sig.tokens], key)
		}
		if sig.joined != "" {
			x.byJoined[sig.joined] = append(x.byJoined[sig.joined], key)
		}
		if sig.shown != "" {
			x.byShown[sig.shown] = append(x.byShown[sig.shown], key)
		}
		if len([]rune(sig.joined)) >= shadowMinTypo {
			for _, v := range oneDeletion(sig.joined) {
				x.byVariant[v] = append(x.byVariant[v], key)
			}
		}
		if len(sig.bigrams) > 0 {
			set := make(map[string]bool, len(sig.bigrams))
			for _, b := range sig.bigrams {
				set[b] = true
				x.byBigram[b] = append(x.byBigram[b], key)
			}
			x.bigrams[key] = set
		}
	}
	return x
}

// match returns the least key (in sort order) of an item the signature nearly duplicates, and
// whether there is one.
func (x *shadowIndex) match(sig shadowSig) (string, bool) {
	var found []string
	found = append(found, x.byTokens[sig.tokens]...)
	found = append(found, x.byJoined[sig.joined]...)
	if sig.shown != "" {
		found = append(found, x.byShown[sig.shown]...)
	}
	if len([]rune(sig.joined)) >= shadowMinTypo {
		for _, v := range oneDeletion(sig.joined) {
			found = append(found, x.byVariant[v]...)
		}
	}
	if len(sig.bigrams) > 0 {
		shared := map[string]int{}
		for _, b := range sig.bigrams {
			for _, key := range x.byBigram[b] {
				shared[key]++
			}
		}
		for key, n := range shared {
			if float64(n) >= shadowOverlap*float64(min(len(sig.bigrams), len(x.bigrams[key]))) {
				found = append(found, key)
			}
		}
	}
	if len(found) == 0 {
		return "", false
	}
	sort.Strings(found)
	return found[0], true
}

// Shadowing lists, for a reviewer of a lock file, each pair of tools, and of prompts, of two
// backends that nearly duplicate each other by the measure above, once per pair, sorted by kind
// then backend: pinning both approves both, so 'gateway pins write' warns about them.
func (l *Lock) Shadowing() []string {
	names := l.Names()
	var out []string
	for _, kind := range shadowKinds() {
		index := make(map[string]*shadowIndex, len(names))
		for _, n := range names {
			index[n] = newShadowIndex(l.Backends[n].Items[kind])
		}
		for i, b := range names {
			for _, key := range l.Backends[b].Keys(kind) {
				sig := itemSig(l.Backends[b].Get(kind, key))
				for _, o := range names[i+1:] {
					if match, ok := index[o].match(sig); ok {
						out = append(out, fmt.Sprintf("%s %s %s nearly duplicates %s %s %s", yamlQuote(b), kind, yamlQuote(key), yamlQuote(o), kind, yamlQuote(match)))
					}
				}
			}
		}
	}
	return out
}
