package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything/at/all", true},
		{"get_issue", "get_issue", true},
		{"get_issue", "get_issues", false},
		{"get_*", "get_issue", true},
		{"get_*", "get_", true},
		{"get_*", "list_issue", false},
		{"*_issue", "create_issue", true},
		{"*_issue", "create_issues", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"a*b*c", "abcbc", true},
		{"get_?", "get_x", true},
		{"get_?", "get_xy", false},
		{"file:///docs/*", "file:///docs/a/b.md", true},
		{"file:///docs/*", "file:///secret/a", false},
		{"**", "x", true},
		{"*a", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", false},
		{"ab*ba", "aba", false},
		{"ab*ba", "abba", true},
		{"ab*ba", "abXba", true},
		{"*?", "", false},
		{"?*", "x", true},
		{"*secret*", "*Xsecret", true},
		{"a*b*c", "a*b*Xc", true},
		{"a?c*", "a*c", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"|"+tt.s, func(t *testing.T) {
			if got := compileGlob(tt.pattern).match(tt.s, false); got != tt.want {
				t.Fatalf("match(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
			}
		})
	}
	// The compiled forms are short-cuts: each must agree with the reference
	// on every pattern and subject above.
	for _, p := range tests {
		for _, s := range tests {
			checkAgainstReference(t, p.pattern, s.s)
		}
	}
}

func testPolicyConfig() Config {
	return Config{
		ScopeHierarchy: map[string][]string{
			"github:admin": {"github:write"},
			"github:write": {"github:read"},
		},
		Policy: PolicyConfig{Rules: []RuleConfig{
			{ID: "gh-read", Upstream: "github", Tools: []string{"get_*", "list_*"}, AnyScope: []string{"github:read", "repo"}},
			{ID: "gh-write", Upstream: "github", Tools: []string{"create_*", "update_*"}, AllScopes: []string{"github:write", "issues"}, Confirm: ConfirmForm, RateLimit: "10/m"},
			{ID: "gh-delete-admin", Upstream: "github", Tools: []string{"delete_*"}, AllScopes: []string{"github:admin"}},
			{ID: "gh-no-delete-repo", Upstream: "github", Tools: []string{"delete_repo"}, Effect: EffectDeny},
			{ID: "k8s-sre", Upstream: "k8s-*", Claims: map[string][]string{"groups": {"sre", "platform"}}},
			{ID: "k8s-no-contractors", Upstream: "k8s-prod", Claims: map[string][]string{"employment": {"contractor"}}, Effect: EffectDeny},
			{ID: "docs-prompts", Upstream: "docs", Prompts: []string{"summarize", "translate_*"}},
			{ID: "docs-public", Upstream: "docs", Resources: []string{"file:///public/*"}},
			{ID: "billing", Upstream: "billing", Tools: []string{"*"}, AnyScope: []string{"billing"},
				Claims: map[string][]string{"tenant": {"acme"}, "org.role": {"admin", "owner"}}},
			{ID: "billing-read", Upstream: "billing", Tools: []string{"get_*"}, AnyScope: []string{"billing:read"}},
		}},
	}
}

func testPrincipal(cfg Config, claims map[string]any) *Principal {
	if claims == nil {
		claims = map[string]any{}
	}
	claims["sub"], claims["iss"] = "user-1", "https://idp.example"
	r := claimReader{scopeClaims: DefaultScopeClaims(), groupsClaim: DefaultGroupsClaim, hierarchy: compileHierarchy(cfg.ScopeHierarchy)}
	return r.principal(claims)
}

func TestDecide(t *testing.T) {
	cfg := testPolicyConfig()
	pol, err := NewPolicy(cfg.Policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		claims   map[string]any
		kind     Kind
		upstream string
		item     string
		effect   Effect
		rule     string
		scopes   []string
		confirm  bool
	}{
		{"anyScope first", map[string]any{"scope": "github:read"}, KindTool, "github", "get_issue", Allow, "gh-read", nil, false},
		{"anyScope second", map[string]any{"scp": []any{"repo"}}, KindTool, "github", "list_repos", Allow, "gh-read", nil, false},
		{"anyScope missing", map[string]any{"scope": "other"}, KindTool, "github", "get_issue", StepUp, "gh-read", []string{"github:read", "repo"}, false},
		{"hierarchy write implies read", map[string]any{"scope": "github:write"}, KindTool, "github", "get_issue", Allow, "gh-read", nil, false},
		{"hierarchy transitive", map[string]any{"scope": "github:admin"}, KindTool, "github", "get_issue", Allow, "gh-read", nil, false},
		{"allScopes all present", map[string]any{"scope": "github:admin issues"}, KindTool, "github", "create_issue", Allow, "gh-write", nil, true},
		{"allScopes one missing", map[string]any{"scope": "github:write"}, KindTool, "github", "create_issue", StepUp, "gh-write", []string{"github:write", "issues"}, false},
		{"deny wins over earlier allow", map[string]any{"scope": "github:admin"}, KindTool, "github", "delete_repo", Hidden, "gh-no-delete-repo", nil, false},
		{"deny wins even without scopes", map[string]any{"scope": ""}, KindTool, "github", "delete_repo", Hidden, "gh-no-delete-repo", nil, false},
		{"allow beside deny", map[string]any{"scope": "github:admin"}, KindTool, "github", "delete_branch", Allow, "gh-delete-admin", nil, false},
		{"no rule for tool", map[string]any{"scope": "github:admin"}, KindTool, "github", "merge_pr", Hidden, "", nil, false},
		{"no rule for upstream", map[string]any{"scope": "github:admin"}, KindTool, "gitlab", "get_issue", Hidden, "", nil, false},
		{"tool rule ignores prompts", map[string]any{"scope": "github:read"}, KindPrompt, "github", "get_issue", Hidden, "", nil, false},
		{"claims group any-of", map[string]any{"groups": []any{"dev", "platform"}}, KindTool, "k8s-prod", "kubectl", Allow, "k8s-sre", nil, false},
		{"claims rule covers all kinds", map[string]any{"groups": "sre"}, KindResource, "k8s-staging", "k8s://pods", Allow, "k8s-sre", nil, false},
		{"claims not held is hidden, not step-up", map[string]any{"groups": []any{"dev"}}, KindTool, "k8s-prod", "kubectl", Hidden, "", nil, false},
		{"deny with claims holds", map[string]any{"groups": []any{"sre"}, "employment": "contractor"}, KindTool, "k8s-prod", "kubectl", Hidden, "k8s-no-contractors", nil, false},
		{"deny with claims not held", map[string]any{"groups": []any{"sre"}, "employment": "staff"}, KindTool, "k8s-prod", "kubectl", Allow, "k8s-sre", nil, false},
		{"prompt glob", nil, KindPrompt, "docs", "translate_fr", Allow, "docs-prompts", nil, false},
		{"prompt rule ignores tools", nil, KindTool, "docs", "summarize", Hidden, "", nil, false},
		{"resource glob", nil, KindResource, "docs", "file:///public/a.md", Allow, "docs-public", nil, false},
		{"resource glob is one segment", nil, KindResource, "docs", "file:///public/a/b.md", Hidden, "", nil, false},
		{"resource outside glob", nil, KindResource, "docs", "file:///private/x", Hidden, "", nil, false},
		{"all claims and scope", map[string]any{"scope": "billing", "tenant": "acme", "org": map[string]any{"role": "owner"}}, KindTool, "billing", "refund", Allow, "billing", nil, false},
		{"one claim missing", map[string]any{"scope": "billing", "tenant": "acme"}, KindTool, "billing", "refund", Hidden, "", nil, false},
		{"claims hold, scope missing", map[string]any{"tenant": "acme", "org.role": "admin"}, KindTool, "billing", "refund", StepUp, "billing", []string{"billing"}, false},
		{"first step-up rule named", map[string]any{"tenant": "acme", "org.role": "admin"}, KindTool, "billing", "get_invoice", StepUp, "billing", []string{"billing"}, false},
		{"later allow beats earlier step-up", map[string]any{"scope": "billing:read", "tenant": "acme", "org.role": "admin"}, KindTool, "billing", "get_invoice", Allow, "billing-read", nil, false},
		{"literal dotted claim name", map[string]any{"scope": "billing", "tenant": "acme", "org.role": "admin"}, KindTool, "billing", "x", Allow, "billing", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPrincipal(cfg, tt.claims)
			d := pol.Decide(context.Background(), p, tt.kind, tt.upstream, tt.item)
			if d.Effect != tt.effect || d.RuleID != tt.rule || !slices.Equal(d.RequiredScopes, tt.scopes) || d.Confirm != tt.confirm {
				t.Fatalf("Decide = %+v, want effect %v rule %q scopes %v confirm %v", d, tt.effect, tt.rule, tt.scopes, tt.confirm)
			}
			if got := pol.Visible(p, tt.kind, tt.upstream, tt.item); got != (d.Effect == Allow) {
				t.Fatalf("Visible = %v disagrees with Decide %v", got, d.Effect)
			}
		})
	}
}

func TestDecideEdgeCases(t *testing.T) {
	empty, err := NewPolicy(PolicyConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := testPrincipal(Config{}, map[string]any{"scope": "everything"})
	if d := empty.Decide(context.Background(), p, KindTool, "x", "y"); d.Effect != Hidden || d.Reason != DecisionNoRule {
		t.Fatalf("empty policy: %+v", d)
	}
	open, err := NewPolicy(PolicyConfig{Rules: []RuleConfig{{}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := open.Decide(context.Background(), nil, KindTool, "x", "y"); d.Effect != Hidden || d.Reason != DecisionUnauthenticated {
		t.Fatalf("nil principal: %+v", d)
	}
	if d := open.Decide(context.Background(), p, KindTool, "x", "y"); d.Effect != Allow || d.RuleID != "rule-0" {
		t.Fatalf("catch-all rule: %+v", d)
	}
	if d := open.Decide(context.Background(), p, Kind("bogus"), "x", "y"); d.Effect != Allow {
		t.Fatalf("catch-all rule covers every kind: %+v", d)
	}
}

func TestDecisionLog(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	cfg := testPolicyConfig()
	pol, err := NewPolicy(cfg.Policy, logger)
	if err != nil {
		t.Fatal(err)
	}
	p := testPrincipal(cfg, map[string]any{"scope": "other", "secret_claim": "s3cr3t-value"})
	pol.Decide(context.Background(), p, KindTool, "github", "get_issue")
	pol.Visible(p, KindTool, "github", "list_x")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("got %d log lines, want 1 (Visible does not log): %q", len(lines), buf.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"effect": "step_up", "rule": "gh-read", "reason": DecisionInsufficientScope,
		"subject": "user-1", "issuer": "https://idp.example", "upstream": "github", "kind": "tool", "name": "get_issue"}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("log %s = %v, want %v", k, rec[k], v)
		}
	}
	if strings.Contains(buf.String(), "s3cr3t") {
		t.Fatal("claim values leaked into the decision log")
	}
}

func TestExplainTrace(t *testing.T) {
	cfg := testPolicyConfig()
	pol, err := NewPolicy(cfg.Policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := testPrincipal(cfg, map[string]any{"scope": "github:admin"})
	tr := pol.trace(p, KindTool, "github", "delete_repo")
	if len(tr) != len(cfg.Policy.Rules) {
		t.Fatalf("trace has %d rules, want %d", len(tr), len(cfg.Policy.Rules))
	}
	for i, rt := range tr {
		if rt.RuleID != cfg.Policy.Rules[i].ID {
			t.Fatalf("trace[%d] = %q, want configuration order", i, rt.RuleID)
		}
	}
	if !tr[2].TargetMatched || !tr[2].ScopesMatched || !tr[3].TargetMatched || tr[3].Effect != EffectDeny {
		t.Fatalf("trace = %+v", tr[:4])
	}
}

func TestClaimMatches(t *testing.T) {
	tests := []struct {
		name     string
		v        any
		accepted []string
		want     bool
	}{
		{"string", "sre", []string{"dev", "sre"}, true},
		{"string miss", "sr", []string{"sre"}, false},
		{"array any-of", []any{"a", "sre"}, []string{"sre"}, true},
		{"array miss", []any{"a", "b"}, []string{"sre"}, false},
		{"number", float64(42), []string{"42"}, true},
		{"bool", true, []string{"true"}, true},
		{"object never matches", map[string]any{"sre": true}, []string{"sre"}, false},
		{"nil", nil, []string{""}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := claimMatches(tt.v, tt.accepted); got != tt.want {
				t.Fatalf("claimMatches(%v, %v) = %v", tt.v, tt.accepted, got)
			}
		})
	}
}

func TestClaimPathLookup(t *testing.T) {
	claims := map[string]any{
		"https://example.com/roles": "exact",
		"a.b":                       "exact wins",
		"a":                         map[string]any{"b": "nested", "c": map[string]any{"d": "deep"}},
		"s":                         "not an object",
	}
	tests := []struct {
		name string
		want any
		ok   bool
	}{
		{"https://example.com/roles", "exact", true},
		{"a.b", "exact wins", true},
		{"a.c.d", "deep", true},
		{"a.x", nil, false},
		{"s.x", nil, false},
		{"missing", nil, false},
	}
	for _, tt := range tests {
		got, ok := compileClaimPath(tt.name).lookup(claims)
		if ok != tt.ok || got != tt.want {
			t.Errorf("lookup(%q) = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// The per-upstream rule lists are a short-cut: Decide must answer as if it
// scanned every rule.
func TestDecideUpstreamIndex(t *testing.T) {
	cfg := testPolicyConfig()
	cfg.Policy.Rules = append(cfg.Policy.Rules,
		RuleConfig{ID: "all-deny-secret", Upstream: "*", Tools: []string{"*secret*"}, Effect: EffectDeny},
		RuleConfig{ID: "k8s-prod-read", Upstream: "k8s-prod", Tools: []string{"get_*"}, AnyScope: []string{"k8s:read"}},
		RuleConfig{ID: "any-ping", Upstream: "*", Tools: []string{"ping"}},
	)
	pol, err := NewPolicy(cfg.Policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	principals := []*Principal{
		testPrincipal(cfg, map[string]any{"scope": "github:admin issues billing k8s:read", "tenant": "acme", "org.role": "admin", "groups": []any{"sre"}}),
		testPrincipal(cfg, map[string]any{"scope": "github:read", "employment": "contractor", "groups": "platform"}),
		testPrincipal(cfg, nil),
	}
	upstreams := []string{"github", "gitlab", "k8s-prod", "k8s-dev", "k8s-", "docs", "billing", "", "*"}
	names := []string{"get_issue", "create_issue", "delete_repo", "delete_branch", "get_secret", "ping", "summarize", "file:///public/a", "refund"}
	for _, pr := range principals {
		for _, up := range upstreams {
			for _, kind := range []Kind{KindTool, KindPrompt, KindResource} {
				for _, name := range names {
					got, want := pol.evaluate(pr, kind, up, name), scanAll(pol, pr, kind, up, name)
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s %s/%s: got %+v, want %+v", kind, up, name, got, want)
					}
				}
			}
		}
	}
}

// scanAll is the Policy rules applied to every rule in order, without the
// per-upstream lists.
func scanAll(p *Policy, pr *Principal, kind Kind, upstream, name string) Decision {
	var stepUp *rule
	for _, r := range p.order {
		if r.deny && r.targets(kind, upstream, name, false) && r.claimsHold(pr) {
			return Decision{RuleID: r.id, Reason: DecisionDenied}
		}
	}
	for _, r := range p.order {
		if r.deny || !r.targets(kind, upstream, name, false) || !r.claimsHold(pr) {
			continue
		}
		if r.scopesHold(pr) {
			return Decision{Effect: Allow, RuleID: r.id, Reason: DecisionAllowed, Confirm: r.confirm.Enabled(),
				ConfirmURL: r.confirm == ConfirmURL, ConfirmFallbackClientForm: r.fallback, RateLimit: r.rateLimit,
				RateItem: r.rateItem(kind, name, false)}
		}
		if stepUp == nil {
			stepUp = r
		}
	}
	if stepUp != nil {
		return Decision{Effect: StepUp, RuleID: stepUp.id, Reason: DecisionInsufficientScope, RequiredScopes: stepUp.required}
	}
	return Decision{Reason: DecisionNoRule}
}

// TestClaimNumbersBeyondDoubles: a claim holding an integer beyond ±2^53 is read (as JSON
// numbers are, into a float64) as a neighbour: tenant 9007199254740993 reads as
// 9007199254740992. Compared by that reading's text it would satisfy a rule written for the
// neighbour, another tenant; so such a number satisfies no claim condition. Token signed by the
// development issuer and verified over HTTP.
func TestClaimNumbersBeyondDoubles(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	pol, err := NewPolicy(PolicyConfig{Rules: []RuleConfig{{ID: "tenant", Upstream: "billing", Tools: []string{"*"},
		Claims: map[string][]string{"tenant": {"9007199254740992", "9007199254740991", "42", "-9007199254740992"}}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tenant any
		want   Effect
	}{
		{int64(9007199254740993), Hidden},
		{int64(9007199254740992), Hidden}, // 2^53 itself: the reading of 2^53+1 too
		{int64(-9007199254740993), Hidden},
		{json.Number("9007199254740992.5"), Hidden},
		{json.Number("9.007199254740993e15"), Hidden},
		{int64(9007199254740991), Allow},
		{int64(42), Allow},
		{json.Number("42.0"), Allow},
	} {
		p := wantAuth(t, a, mint(t, iss, devissuer.Claims{"tenant": tc.tenant}), nil, ReasonNone)
		if d := pol.Decide(context.Background(), p, KindTool, "billing", "refund"); d.Effect != tc.want {
			t.Errorf("tenant %v: %v, want %v", tc.tenant, d.Effect, tc.want)
		}
	}
}

// TestReaches: a backend is reached by a caller an allow rule for it holds for (issuer, claims,
// scopes and a DPoP-bound token where the rule requires one, or listWithoutScopes), unless a deny rule covering the whole backend holds too; a deny
// rule naming some items leaves the rest reachable.
func TestReaches(t *testing.T) {
	pol, err := NewPolicy(PolicyConfig{Rules: []RuleConfig{
		{ID: "out", Upstream: "hr", Effect: EffectDeny, Claims: map[string][]string{"groups": {"contractors"}}},
		{ID: "hr-secret", Upstream: "hr", Effect: EffectDeny, Tools: []string{"salaries"}},
		{ID: "hr", Upstream: "hr", Tools: []string{"*"}, AllScopes: []string{"hr:read"}},
		{ID: "docs", Upstream: "docs-*", Tools: []string{"*"}, AnyScope: []string{"docs"}},
		{ID: "ops", Upstream: "ops", Tools: []string{"*"}, AllScopes: []string{"ops"}, ListWithoutScopes: true},
		{ID: "other-iss", Upstream: "billing", Tools: []string{"*"}, Issuers: []string{"https://other"}},
		{ID: "bound", Upstream: "vault", Tools: []string{"*"}, AnyScope: []string{"vault"}, DPoP: "required"},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	who := func(scopes string, groups ...string) *Principal {
		p := &Principal{Issuer: "https://iss", Subject: "s", Scopes: ScopeSet{}, Claims: map[string]any{}}
		for _, s := range strings.Fields(scopes) {
			p.Scopes[s] = struct{}{}
		}
		if groups != nil {
			p.Claims["groups"] = []any{groups[0]}
		}
		return p
	}
	for _, tt := range []struct {
		name     string
		p        *Principal
		upstream string
		want     bool
	}{
		{"scopes held", who("hr:read"), "hr", true},
		{"scopes missing", who("docs"), "hr", false},
		{"the whole backend denied", who("hr:read", "contractors"), "hr", false},
		{"a glob upstream", who("docs"), "docs-eu", true},
		{"listed without scopes", who(""), "ops", true},
		{"another issuer's rule", who("docs"), "billing", false},
		{"no rule", who("hr:read docs ops"), "unknown", false},
		{"no principal", nil, "hr", false},
		// A rule requiring DPoP lists nothing to a bearer caller (Visible), so its backend's
		// instructions are not for that caller either.
		{"DPoP required, a bearer token", who("vault"), "vault", false},
		{"DPoP required, a bound token", func() *Principal { p := who("vault"); p.JKT = "thumbprint"; return p }(), "vault", true},
	} {
		if got := pol.Reaches(tt.p, tt.upstream); got != tt.want {
			t.Errorf("%s: Reaches(%s) = %v, want %v", tt.name, tt.upstream, got, tt.want)
		}
	}
}

// TestReachesByKind: a backend is reached when, of some kind, an allow rule naming items of it
// holds and no deny rule taking every item of that kind does: a deny of tools: ["*"] (or "**")
// closes a backend whose allow rules give only tools, deny rules taking each kind in turn close
// it between them, and a kind no deny takes whole keeps it reached.
func TestReachesByKind(t *testing.T) {
	interns := map[string][]string{"groups": {"interns"}}
	pol, err := NewPolicy(PolicyConfig{Rules: []RuleConfig{
		{ID: "pay-tools-out", Upstream: "payroll", Effect: EffectDeny, Tools: []string{"*"}, Claims: interns},
		{ID: "pay", Upstream: "payroll", Tools: []string{"*"}, AnyScope: []string{"s"}},
		{ID: "wiki-tools-out", Upstream: "wiki", Effect: EffectDeny, Tools: []string{"**"}, Claims: interns},
		{ID: "wiki", Upstream: "wiki", Tools: []string{"*"}, Prompts: []string{"summary"}, AnyScope: []string{"s"}},
		{ID: "crm-tools-out", Upstream: "crm", Effect: EffectDeny, Tools: []string{"x_*", "*"}, Claims: interns},
		{ID: "crm-prompts-out", Upstream: "c*", Effect: EffectDeny, Prompts: []string{"*"}, Claims: interns},
		{ID: "crm-resources-out", Upstream: "crm", Effect: EffectDeny, Resources: []string{"*"}, Claims: interns},
		{ID: "crm", Upstream: "crm", AnyScope: []string{"s"}},
		{ID: "cms-tools-out", Upstream: "cms", Effect: EffectDeny, Tools: []string{"*"}, Claims: interns},
		{ID: "cms", Upstream: "cms", AnyScope: []string{"s"}},
		{ID: "git-some-out", Upstream: "git", Effect: EffectDeny, Tools: []string{"delete_*"}, Claims: interns},
		{ID: "git", Upstream: "git", Tools: []string{"*"}, AnyScope: []string{"s"}},
		{ID: "hr-tools-out", Upstream: "hr", Effect: EffectDeny, Tools: []string{"*?"}, Claims: interns},
		{ID: "hr-prompts-out", Upstream: "hr", Effect: EffectDeny, Prompts: []string{"?**"}, Claims: interns},
		{ID: "hr", Upstream: "hr", Tools: []string{"*"}, Prompts: []string{"*"}, AnyScope: []string{"s"}},
		{ID: "ops-tools-out", Upstream: "ops", Effect: EffectDeny, Tools: []string{"*??"}, Claims: interns},
		{ID: "ops", Upstream: "ops", Tools: []string{"*"}, AnyScope: []string{"s"}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	staff := &Principal{Issuer: "https://iss", Subject: "s", Scopes: ScopeSet{"s": {}}, Claims: map[string]any{}}
	intern := &Principal{Issuer: "https://iss", Subject: "i", Scopes: ScopeSet{"s": {}}, Claims: map[string]any{"groups": []any{"interns"}}}
	for _, tt := range []struct {
		upstream string
		want     bool // for the intern; staff reaches every one
	}{
		{"payroll", false}, // only tools allowed, every tool denied
		{"wiki", true},     // its prompt is left
		{"crm", false},     // each kind denied whole, by three rules
		{"cms", true},      // prompts and resources are left
		{"git", true},      // tools other than delete_* are left
		{"hr", false},      // every name has a character: *? and ?** take every one
		{"ops", true},      // tools of one character are left by *??
	} {
		if !pol.Reaches(staff, tt.upstream) {
			t.Errorf("staff does not reach %s", tt.upstream)
		}
		if got := pol.Reaches(intern, tt.upstream); got != tt.want {
			t.Errorf("the intern reaches %s: %v, want %v", tt.upstream, got, tt.want)
		}
	}
}

// TestRateItem: a rule's rate limit counts a call against the name when the rule lists it
// literally, else against the first pattern that matches it, so the items a caller can make the
// gateway keep a bucket for are the rule's own.
func TestRateItem(t *testing.T) {
	pol, err := NewPolicy(PolicyConfig{Rules: []RuleConfig{
		{ID: "tools", Upstream: "gh", Tools: []string{"create_issue", "create_*", "*"}, RateLimit: "1/m"},
		{ID: "docs", Upstream: "docs", Resources: []string{"https://docs.example/a", "https://docs.example/**"}, RateLimit: "1/m"},
		{ID: "all", Upstream: "k8s", RateLimit: "1/m"},
		{ID: "free", Upstream: "free", Tools: []string{"*"}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		kind           Kind
		upstream, name string
		want           string
	}{
		{KindTool, "gh", "create_issue", "create_issue"},
		{KindTool, "gh", "create_pr", "create_*"},
		{KindTool, "gh", "invented-" + strings.Repeat("x", 100), "*"},
		{KindResource, "docs", "https://docs.example/a", "https://docs.example/a"},
		{KindResource, "docs", "https://docs.example/b/c", "https://docs.example/**"},
		{KindTool, "k8s", "anything", "*"},
		{KindTool, "free", "anything", ""},
	} {
		d := pol.evaluate(testPrincipal(Config{}, nil), tt.kind, tt.upstream, tt.name)
		if d.Effect != Allow || d.RateItem != tt.want {
			t.Errorf("%s %s/%.20s: %+v, want rate item %q", tt.kind, tt.upstream, tt.name, d, tt.want)
		}
	}
}
