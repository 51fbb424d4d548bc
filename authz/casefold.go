package authz

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Case-insensitive backends. A backend that serves files from a case-insensitive file system
// (macOS, Windows by default) opens file:///SRV/Secret/x as file:///srv/secret/x, so a deny
// written for the one must hold for the other. For a backend the operator marks so
// (Options.CaseInsensitive), resource URIs and the resource patterns of every rule are compared
// case-folded: both sides mapped to one representative of their Unicode simple case-folding
// class (the equivalence strings.EqualFold tests), so 'S', 's' and 'ſ', or 'K', 'k' and the
// Kelvin sign, are one character. Allow rules then grant every case variant of what they
// name: right for a backend that does not tell them apart, too much for one that does, hence
// a setting per backend rather than a default.

// foldCase maps s to its case-folded form; ASCII-only text without upper case comes back as
// it is, without allocating.
func foldCase(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return strings.Map(foldRune, s)
		}
	}
	return s
}

// foldRune maps r to the lower case of the smallest rune in its simple case-folding orbit, a
// function of the orbit alone, so any two runes EqualFold calls equal map to the same rune.
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return unicode.ToLower(least)
}

// foldAll folds every pattern (wildcards have no case).
func foldAll(ps []string) []string {
	if ps == nil {
		return nil
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = foldCase(p)
	}
	return out
}

// Caseless is the set of backends whose resource paths are case-insensitive, for every place
// that selects resources by pattern (policy, tool sets, interceptors, guardrails): each folds a
// resource URI of those backends (Fold) and matches it against its patterns folded with
// FoldGlobs. The nil set holds no backend and costs one map lookup.
type Caseless map[string]bool

// NewCaseless returns the set of upstreams; nil when there are none.
func NewCaseless(upstreams []string) Caseless {
	if len(upstreams) == 0 {
		return nil
	}
	c := make(Caseless, len(upstreams))
	for _, u := range upstreams {
		c[u] = true
	}
	return c
}

// Fold returns the resource URI name of upstream as patterns are to match it: case-folded, and
// folded true, when upstream is in the set; as it is otherwise.
func (c Caseless) Fold(upstream, name string) (string, bool) {
	if c[upstream] {
		return foldCase(name), true
	}
	return name, false
}

// FoldGlobs compiles ps case-folded; nil for nil.
func FoldGlobs(ps []string) []Glob {
	if ps == nil {
		return nil
	}
	out := make([]Glob, len(ps))
	for i, p := range ps {
		out[i] = CompileGlob(foldCase(p))
	}
	return out
}

// SetCaseInsensitive marks the backends whose resource URIs name case-insensitive paths: for
// them, resource rules match case-folded (see foldCase). Call it before the policy is shared.
func (p *Policy) SetCaseInsensitive(upstreams []string) { p.caseless = NewCaseless(upstreams) }

// subject is the name rules are matched against, and whether it was folded.
func (p *Policy) subject(kind Kind, upstream, name string) (string, bool) {
	if kind != KindResource {
		return name, false
	}
	return p.caseless.Fold(upstream, name)
}
