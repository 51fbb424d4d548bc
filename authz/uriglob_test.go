package authz

import (
	"context"
	"strings"
	"testing"
)

func TestURIGlobAllow(t *testing.T) {
	tests := []struct {
		pattern, uri string
		want         bool
	}{
		{"*", "file:///a/b", true},
		{"**", "file:///a/b", true},
		{"file:///public/*", "file:///public/a", true},
		{"file:///public/*", "file:///public/", true},
		{"file:///public/*", "file:///public/a/b", false},
		{"file:///public/*", "file:///public/a?x=1", true},
		{"file:///public/*", "file:///public/a?x=/y", false},
		{"file:///public/**", "file:///public/a/b", true},
		{"file:///public/**", "file:///publicity", false},
		{"file:///public/**", "file:///secret/x", false},
		{"file:///public", "file:///public", true},
		{"file:///public", "file:///public/x", false},
		{"file:///home/*/notes", "file:///home/alice/notes", true},
		{"file:///home/*/notes", "file:///home/alice/secret/x/notes", false},
		{"file:///home/**/notes", "file:///home/alice/secret/x/notes", true},
		{"file:///home/?/notes", "file:///home/a/notes", true},
		{"file:///home/?/notes", "file:///home///notes", false},
		{"mem://*/x", "mem://hr/x", true},
		{"mem://*/x", "mem://hr/y/x", false},
		{"*.md", "file:///a.md", false},
		{"**.md", "file:///a/b.md", true},
		{"file:///*.md", "file:///a.md", true},
		{"file:///*.md", "file:///a/b.md", false},
		{"file:///a*b*c", "file:///aXbYc", true},
		{"file:///a*b*c", "file:///aX/bYc", false},
		{"file:///public/{name}", "file:///public/{name}", true},
		{"file:///public/*", "file:///public/{name}", true},
	}
	for _, tt := range tests {
		g := compileURIGlobs([]string{tt.pattern})
		if got := g.match(tt.uri, false); got != tt.want {
			t.Errorf("allow %q matches %q = %v, want %v", tt.pattern, tt.uri, got, tt.want)
		}
	}
}

func TestURIGlobDeny(t *testing.T) {
	tests := []struct {
		pattern, uri string
		want         bool
	}{
		{"file:///secret/*", "file:///secret/key", true},
		{"file:///secret/*", "file:///secret/a/b", true},
		{"file:///secret/*", "file:///secret/key?x=/y", true},
		{"file:///secret/*", "file:///secret/key#/f", true},
		{"file:///secret/*", "file:///secretive/x", false},
		{"file:///secret/*", "file:///public/x", false},
		{"file:///secret", "file:///secret/key", true},
		{"file:///secret/key", "file:///secret/key/more", true},
		{"file:///secret/key", "file:///secret/key?v=2", true},
		{"file:///secret/key", "file:///secret/keys", false},
		{"*secret*", "file:///x/secret/y", true},
		{"mem://hr/*", "mem://hr/salaries/ceo", true},
		{"mem://hr", "mem://hr/salaries/ceo", true},
		{"mem://hr", "mem://hrx/a", false},
	}
	for _, tt := range tests {
		g := compileURIGlobs([]string{tt.pattern})
		if got := g.match(tt.uri, true); got != tt.want {
			t.Errorf("deny %q matches %q = %v, want %v", tt.pattern, tt.uri, got, tt.want)
		}
	}
}

// TestURIGlobForms: the short-cut forms agree with the general matcher.
func TestURIGlobForms(t *testing.T) {
	patterns := []string{"file:///public/*", "file:///public/**", "file:///public", "file:///*.md", "*", "**", "file:///p/***"}
	subjects := []string{"file:///public/a", "file:///public/a/b", "file:///public", "file:///a.md", "file:///b/a.md", "", "file:///p/x/y"}
	for _, p := range patterns {
		g := compileURIGlob(p)
		var tokens []uriTok
		for i := 0; i < len(p); i++ {
			switch p[i] {
			case '*':
				n := uint8(1)
				for i+1 < len(p) && p[i+1] == '*' {
					i, n = i+1, 2
				}
				tokens = append(tokens, uriTok{star: n})
			case '?':
				tokens = append(tokens, uriTok{any: true})
			default:
				tokens = append(tokens, uriTok{b: p[i]})
			}
		}
		for _, s := range subjects {
			want := matchTokens(tokens, s, false)
			if strings.Trim(p, "*") == "" {
				want = true // "*" alone means every URI
			}
			if got := g.match(s); got != want {
				t.Errorf("form %d of %q matches %q = %v, general matcher %v", g.form, p, s, got, want)
			}
		}
	}
}

func FuzzURIGlob(f *testing.F) {
	f.Add("file:///a/*/b**c?", "file:///a/x/bYY/Zcq")
	f.Fuzz(func(t *testing.T, p, s string) {
		if len(p) > 64 || len(s) > 256 {
			return
		}
		_ = compileURIGlobs([]string{p}).match(s, false)
		_ = compileURIGlobs([]string{p}).match(s, true)
	})
}

func TestResourcePatternValidation(t *testing.T) {
	for _, p := range []string{"*", "**", "file:///public/*", "file:///public/**", "mem://hr", "mem:hr/*",
		"file:///public/{name}", "*://x/*", "file:///x?v=*", "file:///a~b", "file:///caf\u00e9/*"} {
		if err := checkResourcePattern(p); err != nil {
			t.Errorf("checkResourcePattern(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{"FILE:///x/*", "mem://HR/*", "file:///public/../secret/*", "file:///a/%2e%2e/*",
		"file:///a%7eb", "file://localhost/x", "file:///a%2Fb/*", "file:///a\\b", "file:///a//b/*",
		"https://h:443/*", "http://@h/x", "http://127.1/*", "https:///h/*",
		"file:///cafe\u0301/*"} { // URIs are matched composed (NFC): a decomposed name never matches
		if err := checkResourcePattern(p); err == nil {
			t.Errorf("checkResourcePattern(%q) = nil, want an error", p)
		}
	}
	_, err := NewPolicy(PolicyConfig{Rules: []RuleConfig{{Resources: []string{"FILE:///x/*"}}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "can never match") {
		t.Fatalf("NewPolicy with an upper-case scheme: %v, want a can-never-match error", err)
	}
}

// TestResourcePolicyTraversal is the policy: with the URIs normalised first, no
// allowed URI reaches the denied tree, and a deny covers what lies under it.
func TestResourcePolicyTraversal(t *testing.T) {
	pol, err := NewPolicy(PolicyConfig{Rules: []RuleConfig{
		{ID: "no-secret", Upstream: "fs", Resources: []string{"file:///secret/*"}, Effect: EffectDeny},
		{ID: "public", Upstream: "fs", Resources: []string{"file:///public/**"}},
		{ID: "all-mem", Upstream: "mem", Resources: []string{"**"}},
		{ID: "no-hr", Upstream: "mem", Resources: []string{"mem://hr"}, Effect: EffectDeny},
		{ID: "no-admin", Upstream: "web", Resources: []string{"https://h/admin"}, Effect: EffectDeny},
		{ID: "web", Upstream: "web", Resources: []string{"*"}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &Principal{Subject: "u"}
	for _, tt := range []struct {
		up, uri string
		want    Effect
	}{
		{"fs", "file:///public/a", Allow},
		{"fs", "file:///public/a/b", Allow},
		{"fs", "file:///secret/key", Hidden},
		{"fs", "file:///secret/a/b?x=/", Hidden},
		{"mem", "mem://hr/salaries/ceo", Hidden},
		{"mem", "mem://docs/x", Allow},
		{"mem", "mem://ada:pw@hr/x", Hidden},
		{"web", "https://ada@h/admin", Hidden},
		{"web", "https://ada:pw@h/admin/x?y", Hidden},
		{"web", "https://ada@h/about", Allow},
	} {
		if d := pol.Decide(context.Background(), p, KindResource, tt.up, tt.uri); d.Effect != tt.want {
			t.Errorf("Decide(%s, %q) = %v, want %v", tt.up, tt.uri, d.Effect, tt.want)
		}
	}
}
