package authz

import (
	"context"
	"strings"
	"testing"
	"unicode"
)

// TestFoldRuneIsAnOrbitFunction: every rune of a simple case-folding orbit folds to the same
// rune, so any two strings strings.EqualFold calls equal fold to the same string.
func TestFoldRuneIsAnOrbitFunction(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := foldRune(r)
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if got := foldRune(f); got != want {
				t.Fatalf("foldRune(%U) = %U, foldRune(%U) = %U: one orbit, two folds", r, want, f, got)
			}
		}
	}
	for _, pair := range [][2]string{{"file:///SRV/Secret/x", "file:///srv/secret/x"}, {"ſ", "S"}, {"ΣΑΣ", "σας"}, {"Ǆ", "ǅ"}} {
		if !strings.EqualFold(pair[0], pair[1]) || foldCase(pair[0]) != foldCase(pair[1]) {
			t.Errorf("%q and %q fold to %q and %q", pair[0], pair[1], foldCase(pair[0]), foldCase(pair[1]))
		}
	}
	if s := "file:///srv/a"; foldCase(s) != s {
		t.Errorf("foldCase changed lower-case ASCII %q", s)
	}
}

// TestPolicyCaseInsensitivePaths: for a backend marked case-insensitive, deny and allow resource
// patterns match case-folded; for any other backend, and for tool and prompt names, exactly.
func TestPolicyCaseInsensitivePaths(t *testing.T) {
	pol, err := NewPolicy(PolicyConfig{Rules: []RuleConfig{
		{ID: "no-secret", Resources: []string{"file:///srv/secret/**"}, Tools: []string{"drop"}, Effect: EffectDeny},
		{ID: "docs", Resources: []string{"file:///srv/docs/*"}, Tools: []string{"*"}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pol.SetCaseInsensitive([]string{"mac"})
	p := &Principal{Subject: "u"}
	for _, tt := range []struct {
		up   string
		kind Kind
		name string
		want Effect
	}{
		{"mac", KindResource, "file:///SRV/Secret/x", Hidden},
		{"mac", KindResource, "file:///srv/ſecret/x", Hidden},
		{"mac", KindResource, "file:///SRV/DOCS/a.md", Allow}, // the allow grants its case variants
		{"mac", KindResource, "file:///srv/DOCS/a/b", Hidden}, // and still stays within one segment
		{"lin", KindResource, "file:///SRV/DOCS/a.md", Hidden},
		{"lin", KindResource, "file:///srv/docs/a.md", Allow},
		{"mac", KindTool, "DROP", Allow}, // tool names are not paths
		{"mac", KindTool, "drop", Hidden},
	} {
		if d := pol.Decide(context.Background(), p, tt.kind, tt.up, tt.name); d.Effect != tt.want {
			t.Errorf("Decide(%s, %s %q) = %v, want %v", tt.up, tt.kind, tt.name, d.Effect, tt.want)
		}
	}
	if !pol.Denied(p, KindResource, "mac", "file:///Srv/SECRET/k") {
		t.Error("Denied (embedded resources) does not fold")
	}
}
