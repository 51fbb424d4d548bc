package authz

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/resuri"
)

// Resource patterns are matched against the normal form of the backend URI (internal/resuri):
// the gateway normalises every URI before policy sees it and forwards that normal form, so no
// ".." or escape can carry a URI out of what a pattern names. On top of that:
//
//   - In an allow rule, '*' matches any run of characters other than '/' (it stays within one
//     path segment), '**' matches any run including '/', and '?' matches one character (one
//     UTF-8 encoded rune) other than '/'. A pattern that is exactly "*" matches every URI. So file:///public/* grants the
//     direct children of /public, file:///public/** everything under it.
//   - In a deny rule, '*' and '**' both match any run, '/' included, and '?' any one character, and
//     the rule also covers every URI under one it matches, the URI with any query or
//     fragment, and with any user information (resuri.Enclosing): deny file:///secret/* hides
//     file:///secret/a/b and file:///secret/a?x=1, deny file:///secret hides
//     file:///secret/key, deny https://h/secret hides https://ada@h/secret.
//
// Each kind of rule thus errs on its safe side: an allow grants no more than it spells out, a
// deny fences off at least what it spells out, whatever the backend makes of sub-paths and
// queries. Tool and prompt name patterns keep plain glob semantics (see glob).
type uriGlobs struct {
	deny  globs     // plain globs, for deny rules
	allow []uriGlob // segment-aware globs, for allow rules
}

func compileURIGlobs(ps []string) uriGlobs {
	u := uriGlobs{deny: compileGlobs(ps), allow: make([]uriGlob, len(ps))}
	for i, p := range ps {
		u.allow[i] = compileURIGlob(p)
	}
	return u
}

// match reports whether one of the patterns matches uri under the semantics of a deny rule
// (deny true) or an allow rule.
func (u uriGlobs) match(uri string, deny bool) bool {
	if !deny {
		for i := range u.allow {
			if u.allow[i].match(uri) {
				return true
			}
		}
		return false
	}
	return u.deny.covers(uri) || resuri.Enclosing(uri, u.deny.covers)
}

// covers is match with a deny rule's reading, as a func(string) bool.
func (gs globs) covers(s string) bool { return gs.match(s, true) }

// uriGlob is one allow-rule resource pattern.
type uriGlob struct {
	form   uriGlobForm
	lit    string   // uriLiteral: the pattern; uriSubtree, uriSegment: the text before the wildcard
	tokens []uriTok // uriGeneral
}

type uriGlobForm uint8

const (
	uriGeneral uriGlobForm = iota // matched token by token
	uriAll                        // "*" or only '*'s: everything
	uriLiteral                    // no wildcard
	uriSubtree                    // prefix + "**": everything starting with prefix
	uriSegment                    // prefix + "*": prefix, then no '/'
)

// uriTok is a literal byte (star 0), '?' (star 0, any: one character, '/' only with slash),
// '*' (star 1: a run without '/') or '**' (star 2: any run).
type uriTok struct {
	b     byte
	any   bool
	slash bool
	star  uint8
}

func compileURIGlob(p string) uriGlob {
	if strings.Trim(p, "*") == "" {
		return uriGlob{form: uriAll}
	}
	if !strings.ContainsAny(p, "*?") {
		return uriGlob{form: uriLiteral, lit: p}
	}
	if i := strings.IndexAny(p, "*?"); p[i] == '*' {
		switch rest := p[i:]; {
		case rest == "**" || strings.Trim(rest, "*") == "" && len(rest) > 2:
			return uriGlob{form: uriSubtree, lit: p[:i]}
		case rest == "*":
			return uriGlob{form: uriSegment, lit: p[:i]}
		}
	}
	g := uriGlob{form: uriGeneral}
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*':
			n := 1
			for i+1 < len(p) && p[i+1] == '*' {
				i, n = i+1, 2
			}
			g.tokens = append(g.tokens, uriTok{star: uint8(n)})
		case '?':
			g.tokens = append(g.tokens, uriTok{any: true})
		default:
			g.tokens = append(g.tokens, uriTok{b: p[i]})
		}
	}
	return g
}

func (g *uriGlob) match(s string) bool {
	switch g.form {
	case uriAll:
		return true
	case uriLiteral:
		return s == g.lit
	case uriSubtree:
		return strings.HasPrefix(s, g.lit)
	case uriSegment:
		return strings.HasPrefix(s, g.lit) && strings.IndexByte(s[len(g.lit):], '/') < 0
	}
	return matchTokens(g.tokens, s, false)
}

// matchTokens runs the pattern as a set of positions in s (a bit per position), which bounds
// the work by len(tokens)*len(s) whatever the pattern (a '?' over a run of invalid bytes in a
// deny rule: by len(tokens)*len(s)², on input no JSON reader of the gateway lets through).
// deny picks the deny-rule reading of invalid UTF-8 (see glob). Names and URIs are short, so
// the position sets live on the stack.
func matchTokens(tokens []uriTok, s string, deny bool) bool {
	var buf [2 * 257]bool
	var cur, next []bool
	if len(s) < 257 {
		cur, next = buf[:len(s)+1], buf[257:257+len(s)+1]
	} else {
		cur, next = make([]bool, len(s)+1), make([]bool, len(s)+1)
	}
	cur[0] = true
	for _, t := range tokens {
		clear(next)
		live := false
		switch t.star {
		case 1, 2:
			live = starRun(s, cur, next, t.star == 1)
		default:
			for i := 0; i < len(s); i++ {
				switch {
				case !cur[i]:
				case t.any:
					live = oneChar(s, i, t.slash, deny, next) || live
				case s[i] == t.b:
					next[i+1] = true
					live = true
				}
			}
		}
		if !live {
			return false
		}
		cur, next = next, cur
	}
	return cur[len(s)]
}

// starRun marks in next every position a '*' (segment: not across a '/') or '**' can reach
// from one marked in cur, and reports whether it marked any. It steps by character (an
// invalid byte is one), so no run ends inside a multi-byte character where a '?' would then
// read half of one.
func starRun(s string, cur, next []bool, segment bool) bool {
	run, live := false, false
	for i := 0; ; {
		run = run || cur[i]
		next[i] = run
		live = live || run
		if i == len(s) {
			return live
		}
		if segment && s[i] == '/' {
			run = false
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
}

// checkResourcePattern rejects a resource pattern that could never match a normalised URI (an
// upper-case scheme or host, a "..", an escape the gateway decodes or refuses): such a rule
// would silently allow or deny nothing. Patterns whose scheme is itself a wildcard are not
// checked.
func checkResourcePattern(p string) error {
	w := strings.IndexAny(p, "*?")
	if w >= 0 && !strings.Contains(p[:w], ":") {
		return nil
	}
	// Stand a plain letter in for each wildcard run: what it matches is normal text.
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '*' || p[i] == '?' {
			for i+1 < len(p) && (p[i+1] == '*' || p[i+1] == '?') {
				i++
			}
			b.WriteByte('a')
			continue
		}
		b.WriteByte(p[i])
	}
	s := b.String()
	norm, err := resuri.Normalize(s)
	if err != nil || norm != s {
		if t, terr := resuri.NormalizeTemplate(s); terr == nil && t == s {
			return nil
		}
	}
	switch {
	case err != nil:
		return fmt.Errorf("resource pattern %q can never match: %v", p, err)
	case norm != s:
		return fmt.Errorf("resource pattern %q can never match: URIs are matched in normal form (here %q)", p, norm)
	}
	return nil
}

// Denied reports whether a deny rule hides the item from pr (Decide would answer Hidden with
// reason denied_by_rule). The gateway drops a resource embedded in a tool or prompt result when
// a deny rule covers its URI: the tool's own rule authorised the call, an explicit deny on the
// resource still holds. It does not log.
func (p *Policy) Denied(pr *Principal, kind Kind, upstream, name string) bool {
	return p.evaluate(pr, kind, upstream, name).Reason == DecisionDenied
}

// Denied is Policy().Denied.
func (s *Service) Denied(p *Principal, kind Kind, upstream, name string) bool {
	return s.policy.Denied(p, kind, upstream, name)
}
