package authz

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestListing: lists show what a call allows and, where the rule deciding a step-up opts in
// with listWithoutScopes, the stepped-up item too, with every scope its 403 challenge names.
// Hidden stays hidden: a deny rule, unmet claims and no rule all leave the item out, opt-in
// or not.
func TestListing(t *testing.T) {
	rules := []RuleConfig{
		{ID: "read", Upstream: "notes", Tools: []string{"get_*"}, AnyScope: []string{"notes:read"}},
		{ID: "write", Upstream: "notes", Tools: []string{"add_*", "delete_*"}, AllScopes: []string{"notes:write"},
			AnyScope: []string{"notes:edit", "notes:admin"}, ListWithoutScopes: true},
		{ID: "no-purge", Upstream: "notes", Tools: []string{"delete_all"}, Effect: EffectDeny},
		{ID: "ops", Upstream: "ops", Tools: []string{"*"}, AnyScope: []string{"ops"},
			Claims: map[string][]string{"groups": {"sre"}}, ListWithoutScopes: true},
		{ID: "audit", Upstream: "audit", Prompts: []string{"*"}, AnyScope: []string{"audit"}},
	}
	pol, err := NewPolicy(PolicyConfig{Rules: rules}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reader := map[string]any{"scope": "notes:read"}
	tests := []struct {
		name     string
		claims   map[string]any
		kind     Kind
		upstream string
		item     string
		listed   bool
		scopes   []string
	}{
		{"allowed: listed, unmarked", reader, KindTool, "notes", "get_note", true, nil},
		{"step-up opted in: listed with every scope", reader, KindTool, "notes", "add_note", true, []string{"notes:write", "notes:edit", "notes:admin"}},
		{"step-up not opted in: hidden", map[string]any{"scope": "x"}, KindTool, "notes", "get_note", false, nil},
		{"granted: unmarked", map[string]any{"scope": "notes:write notes:edit"}, KindTool, "notes", "add_note", true, nil},
		{"deny wins over the opt-in", reader, KindTool, "notes", "delete_all", false, nil},
		{"claims unmet: hidden despite the opt-in", map[string]any{"groups": "dev"}, KindTool, "ops", "restart", false, nil},
		{"claims met, scope missing: listed", map[string]any{"groups": "sre"}, KindTool, "ops", "restart", true, []string{"ops"}},
		{"no rule: hidden", reader, KindTool, "notes", "export", false, nil},
		{"other kinds keep their rule's choice", reader, KindPrompt, "audit", "summary", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPrincipal(Config{}, tt.claims)
			listed, scopes := pol.Listing(p, tt.kind, tt.upstream, tt.item)
			if listed != tt.listed || !slices.Equal(scopes, tt.scopes) {
				t.Fatalf("Listing = %v %v, want %v %v", listed, scopes, tt.listed, tt.scopes)
			}
			d := pol.Decide(context.Background(), p, tt.kind, tt.upstream, tt.item)
			if tt.scopes != nil && (d.Effect != StepUp || !slices.Equal(d.RequiredScopes, tt.scopes) || !d.ListWithoutScopes) {
				t.Fatalf("a listed, marked item must be a step-up naming the same scopes: %+v", d)
			}
			if tt.listed && tt.scopes == nil && d.Effect != Allow {
				t.Fatalf("an unmarked listed item must be allowed: %+v", d)
			}
		})
	}
	if listed, _ := pol.Listing(nil, KindTool, "notes", "add_note"); listed {
		t.Error("listed for no principal")
	}
}

// TestListWithoutScopesValidate: the opt-in means something only on an allow rule that
// requires scopes; elsewhere it is refused rather than ignored.
func TestListWithoutScopesValidate(t *testing.T) {
	err := PolicyConfig{Rules: []RuleConfig{
		{ID: "deny", Tools: []string{"x"}, Effect: EffectDeny, ListWithoutScopes: true},
		{ID: "no-scopes", Tools: []string{"y"}, ListWithoutScopes: true},
		{ID: "fine", Tools: []string{"z"}, AnyScope: []string{"s"}, ListWithoutScopes: true},
	}}.validate()
	if err == nil {
		t.Fatal("validate accepted listWithoutScopes on a deny rule and on a rule without scopes")
	}
	for _, want := range []string{`policy.rules[0].effect: rule "deny": a deny rule takes no anyScope, allScopes, confirm, rateLimit, listWithoutScopes or dpop`,
		`policy.rules[1].listWithoutScopes: rule "no-scopes": needs anyScope or allScopes`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "rules[2]") {
		t.Errorf("a valid opt-in refused:\n%v", err)
	}
}
