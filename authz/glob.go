package authz

// glob is a compiled name pattern: '*' matches any run of characters
// (including '/' and the empty run), '?' matches exactly one byte, and every
// other byte matches itself. There are no character classes or escapes, so
// any string is a valid pattern and matching cannot fail.
type glob struct {
	pattern string
	literal bool // no wildcard: plain comparison
	any     bool // "*": matches everything
}

func compileGlob(p string) glob {
	g := glob{pattern: p, literal: true}
	for i := 0; i < len(p); i++ {
		if p[i] == '*' || p[i] == '?' {
			g.literal = false
			break
		}
	}
	g.any = p == "*"
	return g
}

func (g glob) match(s string) bool {
	switch {
	case g.any:
		return true
	case g.literal:
		return g.pattern == s
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
