package authz

import (
	"strings"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/resuri"
)

// glob is a compiled name pattern: '*' matches any run of characters (including '/' and the
// empty run), '?' matches exactly one character (one UTF-8 encoded rune, however many bytes
// it takes), and every other character matches itself. There are no character classes or
// escapes, so any string is a valid pattern and matching cannot fail.
//
// Names and URIs reach policy as valid UTF-8 (the JSON reader refuses anything else and
// resource URIs are normalised), but the matcher does not rely on it. A byte that does not
// start a valid UTF-8 sequence is one character of its own, as utf8.DecodeRuneInString reads
// it; a reader elsewhere may instead fold a run of such bytes into one replacement character,
// so '?' errs on the safe side of each rule: in a deny rule it also matches a whole run of
// invalid bytes (the deny covers every reading), in an allow rule it matches no invalid byte
// (the allow grants no reading it did not spell out). '*' matches any run of bytes either way.
type glob struct {
	pattern string
	form    globForm
	prefix  string   // globAffix: the text before the only '*'
	suffix  string   // globAffix: the text after it
	tokens  []uriTok // globRunes: the pattern as tokens
}

// globForm picks the matcher at compile time. Rule patterns are mostly
// literals or a single '*' ("get_*", "k8s-*", "file:///public/*"), which a
// prefix and suffix test decides without the general matcher.
type globForm uint8

const (
	globWild    globForm = iota // '*'s and no '?': wildMatch
	globAny                     // "*": matches everything
	globLiteral                 // no wildcard: plain comparison
	globAffix                   // one '*' and no '?': prefix and suffix
	globRunes                   // has a '?': matchTokens, which reads the subject by rune
)

// TakesEveryName reports whether pattern p, read as a deny rule reads it ('*' any run, '?' any
// one character), matches every name an item can have: it is '*'s and at most one '?', with a
// '*' ("*", "**", "*?", "?**"), as no item has an empty name. "*??" leaves the names of one
// character, "?" every longer one.
func TakesEveryName(p string) bool {
	stars, marks := strings.Count(p, "*"), strings.Count(p, "?")
	return stars > 0 && marks <= 1 && stars+marks == len(p)
}

// Glob is a compiled policy glob, for the places outside policy that select items in the same
// terms rules do (tool sets, interceptors, guardrails): '*' any run of characters, '?' one
// character (rune).
type Glob struct{ g glob }

// CompileGlob compiles p; any string is a valid pattern.
func CompileGlob(p string) Glob { return Glob{compileGlob(p)} }

// Match reports whether s matches the glob as an allow rule reads it: '?' matches no byte of
// an invalid UTF-8 sequence.
func (g Glob) Match(s string) bool { return g.g.match(s, false) }

// Covers reports whether s matches the glob as a deny rule reads it: '?' also matches any run
// of bytes that are not valid UTF-8. A selection that applies a protection (a check, a
// redaction) uses Covers, so that no reading of a malformed name escapes it.
func (g Glob) Covers(s string) bool { return g.g.match(s, true) }

// CoversResource is Covers for a resource URI in normal form: it also holds when the glob
// covers the URI without its user information, which an HTTP client sends as credentials for
// the same resource (as deny rules read it, resuri.Enclosing), so that no user information lets
// a URI escape a protection.
func (g Glob) CoversResource(uri string) bool {
	if g.g.match(uri, true) {
		return true
	}
	bare, ok := resuri.WithoutUserinfo(uri)
	return ok && g.g.match(bare, true)
}

// CoversAny reports whether one of gs covers s (Glob.Covers), or, when resource says s is a
// resource URI in normal form, covers it as Glob.CoversResource reads it. The URI without its
// user information is worked out once for the whole list, not once per glob.
func CoversAny(gs []Glob, s string, resource bool) bool {
	for _, g := range gs {
		if g.g.match(s, true) {
			return true
		}
	}
	if !resource || len(gs) == 0 {
		return false
	}
	bare, ok := resuri.WithoutUserinfo(s)
	if !ok {
		return false
	}
	for _, g := range gs {
		if g.g.match(bare, true) {
			return true
		}
	}
	return false
}

func compileGlob(p string) glob {
	g := glob{pattern: p}
	stars, star := 0, -1
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*':
			stars, star = stars+1, i
		case '?':
			g.form, g.tokens = globRunes, globTokens(p)
			return g
		}
	}
	switch {
	case p == "*":
		g.form = globAny
	case stars == 0:
		g.form = globLiteral
	case stars == 1:
		g.form, g.prefix, g.suffix = globAffix, p[:star], p[star+1:]
	}
	return g
}

// globTokens spells a name pattern in the tokens matchTokens runs: '*' any run, '?' any one
// character, '/' included.
func globTokens(p string) []uriTok {
	toks := make([]uriTok, 0, len(p))
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*':
			if len(toks) == 0 || toks[len(toks)-1].star != 2 {
				toks = append(toks, uriTok{star: 2})
			}
		case '?':
			toks = append(toks, uriTok{any: true, slash: true})
		default:
			toks = append(toks, uriTok{b: p[i]})
		}
	}
	return toks
}

// match reports whether s matches; deny picks the deny-rule reading of invalid UTF-8.
func (g glob) match(s string, deny bool) bool {
	switch g.form {
	case globAny:
		return true
	case globLiteral:
		return g.pattern == s
	case globAffix:
		// The length check keeps prefix and suffix from overlapping in s.
		return len(s) >= len(g.prefix)+len(g.suffix) && strings.HasPrefix(s, g.prefix) && strings.HasSuffix(s, g.suffix)
	case globRunes:
		return matchTokens(g.tokens, s, deny)
	default:
		return wildMatch(g.pattern, s)
	}
}

// wildMatch is the linear-time greedy matcher with a single backtrack point, for patterns of
// literals and '*' only: on a mismatch it retries from the last '*' consuming one more byte,
// which is enough because '*' is the only variable-length token. Matching bytes rather than
// runes changes nothing here: a pattern's literal text is whole characters, so every match
// starts and ends each '*' run on a character boundary of a valid UTF-8 subject.
func wildMatch(p, s string) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		// '*' first: a '*' in the subject must not be taken as a literal
		// match for the pattern's '*', or "*x*" would miss "*yx".
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(p) && p[pi] == s[si]:
			pi++
			si++
		case star >= 0:
			mark++
			pi, si = star+1, mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// globs is a list of patterns; it matches when any one matches.
type globs []glob

func compileGlobs(ps []string) globs {
	out := make(globs, len(ps))
	for i, p := range ps {
		out[i] = compileGlob(p)
	}
	return out
}

func (gs globs) match(s string, deny bool) bool {
	for _, g := range gs {
		if g.match(s, deny) {
			return true
		}
	}
	return false
}

// oneChar marks in next every end of one character that starts at i of s, as a '?' reads it:
// a valid rune (other than '/' unless slash), or for a deny rule any run of invalid bytes.
// It reports whether it marked any.
func oneChar(s string, i int, slash, deny bool, next []bool) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r != utf8.RuneError || size > 1 {
		if r == '/' && !slash {
			return false
		}
		next[i+size] = true
		return true
	}
	if !deny {
		return false
	}
	for j := i; j < len(s); j++ {
		if r, size := utf8.DecodeRuneInString(s[j:]); r != utf8.RuneError || size > 1 {
			break
		}
		next[j+1] = true
	}
	return true
}
