package webpage

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Name is a name the page shows (tool, backend, client, caller, signed-in user): its text with
// invisible and direction-changing characters made visible, and what makes it look like
// another name. Names come from backends, clients and issuers, not from the gateway.
type Name struct {
	Text
	// Mixed names the scripts of its letters and digits when there are several, e.g. "Cyrillic
	// and Latin": a name mixing look-alike letters of two scripts reads as one word but is
	// not the one it looks like.
	Mixed string
	// Script names the one script of its letters when it is not Latin, e.g. "Cyrillic": a name
	// written entirely in look-alikes of Latin letters.
	Script string
	// Folds is the name's compatibility form (NFKC) when that differs: full-width, styled or
	// ligature letters that read as the plain ones ("ｆiles" folds to "files").
	Folds string
}

// Flagged reports whether the page should warn about the name.
func (n Name) Flagged() bool { return n.Mixed != "" || n.Script != "" || n.Folds != "" }

// String is the name as plain text, for a sentence: characters made visible as [U+XXXX], and
// what makes it look like another name in parentheses.
func (n Name) String() string {
	var b strings.Builder
	for _, r := range n.Full {
		if r.Mark {
			b.WriteString("[" + r.S + "]")
			continue
		}
		b.WriteString(r.S)
	}
	switch {
	case n.Mixed != "":
		b.WriteString(" (mixes " + n.Mixed + " letters)")
	case n.Script != "":
		b.WriteString(" (" + n.Script + " letters)")
	case n.Folds != "":
		b.WriteString(" (reads as " + n.Folds + ")")
	}
	return b.String()
}

// NameOf prepares name for the page.
func NameOf(name string) Name {
	n := Name{Text: Visible(name)}
	scripts := scriptsOf(name, nil)
	switch {
	case len(scripts) > 1:
		n.Mixed = joinScripts(scripts)
	case len(scripts) == 1 && scripts[0] != "Latin":
		n.Script = scripts[0]
	}
	// A name not in composed form (NFC: "cafe" and a combining acute) reads as its composed
	// form, other characters to a backend that does not normalise; so does one whose
	// compatibility form differs (full-width, styled letters).
	if f := norm.NFKC.String(name); f != name {
		// The form keeps what the name hides (a right-to-left override, a zero-width space):
		// said as the name is, with it made visible.
		n.Folds = shown(f)
	}
	return n
}

func joinScripts(scripts []string) string {
	return strings.Join(scripts[:len(scripts)-1], ", ") + " and " + scripts[len(scripts)-1]
}

// maxLookAlikeRunes bounds the word LookAlikeWord quotes, so a mark never shows more of a long
// value than its fold does.
const maxLookAlikeRunes = 40

// LookAlikeWord judges free text, such as an argument value, word by word (a word: a run of
// letters, digits and combining marks): for the first word that could pass for another it
// returns the word and why ("еxample mixes Cyrillic and Latin letters" with a Cyrillic "е",
// "ｅxample reads as example" for full-width letters), "" when there is none. Unlike NameOf it
// does not mark a word written in one script other than Latin: free text in Cyrillic or Greek
// is common, and each of its words would be marked.
//
// It is run on every string and member name of a call's arguments, up to a megabyte of them, so
// text in ASCII (which has no word of two scripts and reads as itself) costs no allocation, and
// the text is never copied.
func LookAlikeWord(s string) string {
	if isASCII(s) {
		return ""
	}
	cache := map[rune]string{}
	start := -1
	for i, r := range s {
		if inWord(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if why := lookAlike(s[start:i], cache); why != "" {
				return why
			}
			start = -1
		}
	}
	if start >= 0 {
		return lookAlike(s[start:], cache)
	}
	return ""
}

// inWord reports whether r continues a word for LookAlikeWord.
func inWord(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r) || unicode.Is(unicode.Nl, r)
}

// maxScriptCache bounds the runes LookAlikeWord remembers the script of.
const maxScriptCache = 4096

func lookAlike(word string, cache map[rune]string) string {
	// A word holds the invisible letters and marks a value may (a Hangul filler, a variation
	// selector): the mark quotes it, and the forms it reads as, with them made visible.
	quoted := word
	if utf8.RuneCountInString(word) > maxLookAlikeRunes {
		quoted = string([]rune(word)[:maxLookAlikeRunes]) + "…"
	}
	quoted = shown(quoted)
	if scripts := scriptsOf(word, cache); len(scripts) > 1 {
		return quoted + " mixes " + joinScripts(scripts) + " letters"
	}
	if c := norm.NFC.String(word); c != word {
		// Not in composed form: "cafe" with a combining acute reads as "café" and a backend
		// that normalises reads it so, one that does not reads other characters.
		if utf8.RuneCountInString(c) > maxLookAlikeRunes {
			c = string([]rune(c)[:maxLookAlikeRunes]) + "…"
		}
		return quoted + " reads as " + shown(c) + " but is written with other characters"
	}
	if f := norm.NFKC.String(word); f != norm.NFC.String(word) && isASCII(f) {
		if utf8.RuneCountInString(f) > maxLookAlikeRunes {
			f = string([]rune(f)[:maxLookAlikeRunes]) + "…"
		}
		return quoted + " reads as " + shown(f)
	}
	return ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// commonScripts are tried first: most letters belong to one of them.
var commonScripts = []string{"Latin", "Cyrillic", "Greek", "Armenian", "Hebrew", "Arabic", "Han", "Hiragana",
	"Katakana", "Hangul", "Devanagari", "Thai", "Georgian", "Cherokee"}

// scriptsOf returns the sorted scripts of the letters and digits of s, leaving out the Common
// and Inherited ones (ASCII digits, punctuation, combining marks), which every script uses.
//
// A rune of the same script as the one before it is not looked up again, nor, with a cache,
// a rune looked up before: finding a rune's script can try every script table, and argument
// values reach a megabyte.
func scriptsOf(s string, cache map[rune]string) []string {
	var out []string
	var last *unicode.RangeTable
	for _, r := range s {
		if r < 0x80 && !unicode.IsLetter(r) || !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Nl, r) {
			continue
		}
		if last != nil && unicode.Is(last, r) {
			continue
		}
		sc, ok := cache[r]
		if !ok {
			sc = scriptOf(r)
			if cache != nil && len(cache) < maxScriptCache {
				cache[r] = sc
			}
		}
		if sc != "" {
			last = unicode.Scripts[sc]
			if !slices.Contains(out, sc) {
				out = append(out, sc)
			}
		}
	}
	slices.Sort(out)
	return out
}

func scriptOf(r rune) string {
	if r < 0x80 {
		return "Latin"
	}
	for _, name := range commonScripts {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, r) {
			return name
		}
	}
	return ""
}

// User is a signed-in user as a page shows them: the dot of the "who" partial.
type User struct{ Name, Subject, Issuer Name }

// UserOf is s's user for the "who" partial.
func UserOf(s *Session) *User {
	return &User{Name: NameOf(s.Name), Subject: NameOf(s.Subject), Issuer: NameOf(s.Issuer)}
}
