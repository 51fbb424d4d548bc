package resuri

// Matching normalised URIs: what encloses a URI (deny rules) and what a template may expand to.

import "strings"

// Enclosing calls fn with each URI that strictly encloses the normalised URI u, longest first,
// until fn returns true: u without its query and fragment, then u cut before and after each '/'
// of its path (mem://hr/a/b gives mem://hr/a/, mem://hr/a, mem://hr/, mem://hr); then, when u
// has user information, u without it and each URI enclosing that (https://ada@h/a gives
// https://h/a, https://h/, https://h). It reports whether fn returned true. Deny rules use it:
// what denies a resource denies what lies under it, a query or fragment does not lift a deny,
// and neither does user information, which an HTTP client sends as credentials for the same
// resource.
func Enclosing(u string, fn func(string) bool) bool {
	if enclosing(u, fn) {
		return true
	}
	if bare, ok := WithoutUserinfo(u); ok {
		return fn(bare) || enclosing(bare, fn)
	}
	return false
}

// WithoutUserinfo returns the normalised URI u without the user information of its authority,
// and false when it has none.
func WithoutUserinfo(u string) (string, bool) {
	start := strings.IndexByte(u, ':') + 1
	if !strings.HasPrefix(u[start:], "//") {
		return "", false
	}
	start += 2
	end := len(u)
	if i := strings.IndexAny(u[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at := strings.IndexByte(u[start:end], '@')
	if at < 0 {
		return "", false
	}
	return u[:start] + u[start+at+1:], true
}

// enclosing is Enclosing without the user information step.
func enclosing(u string, fn func(string) bool) bool {
	base := u
	if i := strings.IndexAny(base, "?#"); i >= 0 {
		base = base[:i]
		if fn(base) {
			return true
		}
	}
	start := strings.IndexByte(base, ':') + 1
	if strings.HasPrefix(base[start:], "//") {
		if i := strings.IndexByte(base[start+2:], '/'); i >= 0 {
			start += 2 + i
		} else {
			return false
		}
	}
	for j := len(base) - 1; j >= start; j-- {
		if base[j] != '/' {
			continue
		}
		if j+1 < len(base) && fn(base[:j+1]) {
			return true
		}
		if j > 0 && fn(base[:j]) {
			return true
		}
	}
	return false
}

// MayExpand reports whether the normalised URI u could be an expansion of the normalised URI
// template tmpl (NormalizeTemplate), reading every {expression} as any text at all: the
// template's literal text must appear in u in order, at its start and end, and an expression
// may stand for nothing, for one segment or for many, '/', '?', '&' and '#' included.
//
// It errs on the side of matching: whatever a backend's RFC 6570 matcher (a regular
// expression per template, a segment-wise one, or its own reading of the operators) takes to
// be an expansion of tmpl, MayExpand reports true for it, since the expansion keeps every
// literal character of the template in order. Pinning relies on this, so that no URI read
// through the gateway escapes the verdict on a template it might be served by. It allocates
// nothing.
func MayExpand(tmpl, u string) bool {
	lit, rest, expr := nextLiteral(tmpl)
	if !expr {
		return tmpl == u
	}
	// The first literal run is anchored at the start of u.
	if !strings.HasPrefix(u, lit) {
		return false
	}
	u = u[len(lit):]
	for {
		lit, rest, expr = nextLiteral(rest)
		if !expr {
			// The last literal run is anchored at the end; the expression before it
			// takes whatever lies in between.
			return len(u) >= len(lit) && strings.HasSuffix(u, lit)
		}
		// A run between two expressions: its leftmost occurrence leaves the most text for
		// the runs after it, so greedy search is exact for expressions that match anything.
		i := strings.Index(u, lit)
		if i < 0 {
			return false
		}
		u = u[i+len(lit):]
	}
}

// nextLiteral splits t at its first template expression: the literal text before it, the text
// after it, and whether there was one (when not, lit is all of t).
func nextLiteral(t string) (lit, rest string, expr bool) {
	i := strings.IndexByte(t, '{')
	if i < 0 {
		return t, "", false
	}
	j := strings.IndexByte(t[i:], '}')
	if j < 0 {
		// Not a template in normal form: read the rest as literal text, which matches
		// nothing a '{' could not be in (a URI never holds one).
		return t, "", false
	}
	return t[:i], t[i+j+1:], true
}
