package authz

import (
	"context"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// refGlob is the reference reading of a pattern, as a regular expression over runes: '?' one
// character (any, or other than '/' in a segment-aware allow pattern), '*' any run (or a run
// without '/'), '**' any run. Go's regexp reads a subject rune by rune, so it is an
// independent oracle for what "one character" means.
func refGlob(p string, segments bool) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(p); {
		switch {
		case segments && strings.HasPrefix(p[i:], "**"):
			b.WriteString(`.*`)
			for i < len(p) && p[i] == '*' {
				i++
			}
			continue
		case p[i] == '*' && segments:
			b.WriteString(`[^/]*`)
		case p[i] == '*':
			b.WriteString(`.*`)
		case p[i] == '?' && segments:
			b.WriteString(`[^/]`)
		case p[i] == '?':
			b.WriteString(`.`)
		default:
			r, size := utf8.DecodeRuneInString(p[i:])
			b.WriteString(regexp.QuoteMeta(string(r)))
			i += size
			continue
		}
		i++
	}
	b.WriteString(`)$`)
	return regexp.MustCompile(b.String())
}

// checkAgainstReference compares every matcher that reads pattern p with the reference on
// subject s (valid UTF-8): name globs in both readings, URI allow and deny patterns.
func checkAgainstReference(t *testing.T, p, s string) {
	t.Helper()
	plain, seg := refGlob(p, false).MatchString(s), refGlob(p, true).MatchString(s)
	g := compileGlob(p)
	if got := g.match(s, false); got != plain {
		t.Fatalf("allow glob %q on %q = %v, reference %v", p, s, got, plain)
	}
	if got := g.match(s, true); got != plain {
		t.Fatalf("deny glob %q on %q = %v, reference %v", p, s, got, plain)
	}
	if strings.Trim(p, "*") == "" {
		seg = true // "*" alone means every URI
	}
	u := compileURIGlobs([]string{p})
	if got := u.allow[0].match(s); got != seg {
		t.Fatalf("URI allow pattern %q on %q = %v, reference %v", p, s, got, seg)
	}
	if got := u.deny.covers(s); got != plain {
		t.Fatalf("URI deny pattern %q on %q = %v, reference %v", p, s, got, plain)
	}
}

func TestGlobQuestionMarkIsOneCharacter(t *testing.T) {
	for _, tt := range []struct {
		p, s string
		want bool
	}{
		{"?.txt", "é.txt", true},   // two bytes
		{"?.txt", "日.txt", true},   // three
		{"?.txt", "😀.txt", true},   // four
		{"??.txt", "é.txt", false}, // one character, not two
		{"get_?", "get_é", true},   // name patterns too
		{"a?c*", "aéc", true},      // '?' then '*'
		{"*?x", "日x", true},        // '*' may be empty, '?' takes the rune
		{"file:///s/?", "file:///s/日", true},
	} {
		g := compileGlob(tt.p)
		for _, deny := range []bool{false, true} {
			if got := g.match(tt.s, deny); got != tt.want {
				t.Errorf("glob %q (deny %v) on %q = %v, want %v", tt.p, deny, tt.s, got, tt.want)
			}
		}
		checkAgainstReference(t, tt.p, tt.s)
	}
}

// TestPolicyQuestionMarkDeniesMultibyte is the fail-open case: a deny with '?' must hide a
// tool, prompt or resource whose character there is multi-byte.
func TestPolicyQuestionMarkDeniesMultibyte(t *testing.T) {
	pol, err := NewPolicy(PolicyConfig{Rules: []RuleConfig{
		{ID: "no-secret", Upstream: "fs", Resources: []string{"file:///secret/?.txt"}, Effect: EffectDeny},
		{ID: "no-x", Upstream: "fs", Tools: []string{"drop_?"}, Prompts: []string{"leak_?"}, Effect: EffectDeny},
		{ID: "all", Upstream: "f?", Tools: []string{"*"}, Prompts: []string{"*"}, Resources: []string{"file:///**"}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &Principal{Subject: "u"}
	for _, tt := range []struct {
		kind Kind
		name string
		want Effect
	}{
		{KindResource, "file:///secret/é.txt", Hidden},
		{KindResource, "file:///secret/a.txt", Hidden},
		{KindResource, "file:///public/é.txt", Allow},
		{KindTool, "drop_表", Hidden},
		{KindTool, "drop_ab", Allow},
		{KindPrompt, "leak_ü", Hidden},
	} {
		if d := pol.Decide(context.Background(), p, tt.kind, "fs", tt.name); d.Effect != tt.want {
			t.Errorf("Decide(%s %q) = %v, want %v", tt.kind, tt.name, d.Effect, tt.want)
		}
	}
	// The upstream pattern "f?" reads by character too.
	if d := pol.Decide(context.Background(), p, KindTool, "fé", "t"); d.Effect != Allow {
		t.Errorf("upstream glob f? on fé = %v, want allow", d.Effect)
	}
}

// TestGlobInvalidUTF8 pins the reading of bytes that are not UTF-8: a deny's '?' covers one
// invalid byte or a run of them (however a backend folds them), an allow's '?' none.
func TestGlobInvalidUTF8(t *testing.T) {
	for _, s := range []string{"a\xffb", "a\xff\xfeb", "a\xe6\x97b" /* a truncated 日 */} {
		if !compileGlob("a?b").match(s, true) || !CompileGlob("a?b").Covers(s) {
			t.Errorf("deny a?b does not cover %q", s)
		}
		if compileGlob("a?b").match(s, false) || CompileGlob("a?b").Match(s) {
			t.Errorf("allow a?b matches %q", s)
		}
		if !compileGlob("a*b").match(s, false) {
			t.Errorf("a*b does not match %q", s)
		}
	}
	if compileGlob("a?b").match("a\xff\xffcb", true) {
		t.Error("a deny's '?' took a valid character after the invalid run")
	}
	if !compileURIGlobs([]string{"x:/?/y"}).match("x:/\xff\xfe/y/z", true) {
		t.Error("URI deny does not cover an invalid run")
	}
	if compileURIGlobs([]string{"x:/?/y"}).match("x:/\xff/y", false) {
		t.Error("URI allow matched an invalid byte")
	}
}

// TestGlobAgreesWithReference is the property: on random patterns and UTF-8 subjects over an
// alphabet of one- to four-byte characters, '/', '*' and '?', every matcher agrees with the
// regular-expression reference.
func TestGlobAgreesWithReference(t *testing.T) {
	chars := []string{"a", "b", "/", "é", "日", "😀", "*", "?"}
	r := rand.New(rand.NewPCG(1, 2))
	word := func(alphabet []string, n int) string {
		var b strings.Builder
		for range r.IntN(n) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 20000 {
		checkAgainstReference(t, word(chars, 8), word(chars, 10))
	}
}

// FuzzGlob checks every matcher against the reference on valid UTF-8, and that matching
// invalid UTF-8 never panics and a deny covers at least what an allow matches.
func FuzzGlob(f *testing.F) {
	for _, seed := range [][2]string{{"get_*", "get_issue"}, {"ab*ba", "aba"}, {"*_x", "a_x"}, {"a?*", "ab"}, {"lit", "lit"},
		{"?.txt", "é.txt"}, {"a?b", "a\xff\xfeb"}, {"**?", "/日"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		if len(p) > 64 || len(s) > 256 {
			return
		}
		if utf8.ValidString(p) && utf8.ValidString(s) {
			checkAgainstReference(t, p, s)
			return
		}
		g := compileGlob(p)
		if g.match(s, false) && !g.match(s, true) {
			t.Fatalf("allow %q matches %q but the deny reading does not", p, s)
		}
	})
}
