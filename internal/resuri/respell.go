package resuri

import "strings"

// Respelling a URI under a template as its backend spelt the template.
//
// A backend that matches a read against its own template text (the Go SDK server compiles each
// template to a regular expression whose literal parts are its text exactly) does not find a
// URI under MEM://Items/%7e{id} spelt in the normal form mem://items/~1. Respell writes such a
// URI with the template's literal text as the backend listed it, and accepts the result only
// when it reads back as the URI that was checked (ReadsAs).

// Respell returns u, a URI in normal form, written under the template listed as its backend
// listed it, whose normal form is normal (NormalizeTemplate(listed)): each literal run of the
// template as listed, each expression's text as u has it in its URI form (URIForm). It
// reports false when u is not an expansion of normal (MayExpand, each expression taking the
// text between the literal runs around it, the leftmost place for a run between two), when
// listed and normal differ in their expressions, or when the result does not read back as u
// (ReadsAs).
func Respell(listed, normal, u string) (string, bool) {
	if !MayExpand(normal, u) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(listed) + len(u))
	rest := u
	for first := true; ; first = false {
		nlit, nrest, nexpr := nextLiteral(normal)
		llit, lrest, lexpr := nextLiteral(listed)
		if nexpr != lexpr || (nexpr && expression(normal, nlit, nrest) != expression(listed, llit, lrest)) {
			return "", false
		}
		var value string
		switch {
		case first:
			rest = rest[len(nlit):] // MayExpand: u starts with the first run
		case !nexpr:
			// The last run ends u; the expression before it takes what lies between.
			value, rest = rest[:len(rest)-len(nlit)], ""
		default:
			i := strings.Index(rest, nlit)
			value, rest = rest[:i], rest[i+len(nlit):]
		}
		if !first {
			b.WriteString(URIForm(value))
		}
		b.WriteString(llit)
		if !nexpr {
			break
		}
		normal, listed = nrest, lrest
	}
	s := b.String()
	return s, ReadsAs(s, u)
}

// expression returns the expression of t that nextLiteral(t) split out between lit and rest.
func expression(t, lit, rest string) string { return t[len(lit) : len(t)-len(rest)] }

// ReadsAs reports whether s is a spelling of the normal form n (of a URI, or of a template
// when n holds a '{') that names n to every reader the gateway knows of: s normalises to n
// and holds no dot segment ("." or "..", raw or percent-encoded), which a backend that
// resolves no dot segments would read as another path. Case in the scheme and host, escapes
// of unreserved characters, runs of '/', an empty or default port, empty user information, the spelling of an IP
// address, an empty query, and how non-ASCII text is
// written may differ from n.
func ReadsAs(s, n string) bool {
	if s == n {
		return true
	}
	normalize := Normalize
	if strings.IndexByte(n, '{') >= 0 {
		normalize = NormalizeTemplate
	}
	if got, err := normalize(s); err != nil || got != n {
		return false
	}
	path := s
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	for seg := range strings.SplitSeq(path, "/") {
		if dotLike(seg) {
			return false
		}
	}
	return true
}
