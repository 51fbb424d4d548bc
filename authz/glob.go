package authz

import "strings"

// glob is a compiled name pattern: '*' matches any run of characters
// (including '/' and the empty run), '?' matches exactly one byte, and every
// other byte matches itself. There are no character classes or escapes, so
// any string is a valid pattern and matching cannot fail.
type glob struct {
	pattern string
	form    globForm
	prefix  string // globAffix: the text before the only '*'
	suffix  string // globAffix: the text after it
}

// globForm picks the matcher at compile time. Rule patterns are mostly
// literals or a single '*' ("get_*", "k8s-*", "file:///public/*"), which a
// prefix and suffix test decides without the general matcher.
type globForm uint8

const (
	globWild    globForm = iota // general: wildMatch
	globAny                     // "*": matches everything
	globLiteral                 // no wildcard: plain comparison
	globAffix                   // one '*' and no '?': prefix and suffix
)

// Glob is a compiled policy glob, for the places outside policy that select items in the same
// terms rules do (tool sets): '*' any run of characters, '?' one byte.
type Glob struct{ g glob }

// CompileGlob compiles p; any string is a valid pattern.
func CompileGlob(p string) Glob { return Glob{compileGlob(p)} }

// Match reports whether s matches the glob.
func (g Glob) Match(s string) bool { return g.g.match(s) }

func compileGlob(p string) glob {
	g := glob{pattern: p}
	stars, star := 0, -1
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*':
			stars, star = stars+1, i
		case '?':
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

func (g glob) match(s string) bool {
	switch g.form {
	case globAny:
		return true
	case globLiteral:
		return g.pattern == s
	case globAffix:
		// The length check keeps prefix and suffix from overlapping in s.
		return len(s) >= len(g.prefix)+len(g.suffix) && strings.HasPrefix(s, g.prefix) && strings.HasSuffix(s, g.suffix)
	default:
		return wildMatch(g.pattern, s)
	}
}

// wildMatch is the linear-time greedy matcher with a single backtrack point:
// on a mismatch it retries from the last '*' consuming one more byte, which
// is enough because '*' is the only variable-length token.
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
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
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

func (gs globs) match(s string) bool {
	for _, g := range gs {
		if g.match(s) {
			return true
		}
	}
	return false
}
