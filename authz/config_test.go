package authz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

const exampleYAML = `
issuers:
  - issuer: https://idp.example.com/
    audiences: [https://mcp.example.com/mcp]
    algorithms: [RS256, ES256]
  - issuer: https://login.example.org
    jwksURL: https://login.example.org/keys
clockSkew: 45s
scopeClaim: [scp, scope]
groupsClaim: roles
scopeHierarchy:
  github:write: [github:read]
resourceMetadata:
  scopesSupported: [mcp:tools]
  resourceName: Example MCP
tokenCacheSize: 500
policy:
  rules:
    - id: gh-read
      upstream: github
      tools: ["get_*", "list_*"]
      anyScope: [github:read]
      issuers: [https://idp.example.com/]
    - upstream: github
      tools: ["create_*"]
      allScopes: [github:write]
      confirm: true
      rateLimit: 60/m
      issuers: [https://idp.example.com/, https://login.example.org]
    - upstream: "k8s-*"
      claims: {groups: [sre]}
      issuers: ["*"]
    - upstream: github
      tools: [delete_repo]
      effect: deny
`

func TestConfigYAML(t *testing.T) {
	var cfg Config
	dec := yaml.NewDecoder(strings.NewReader(exampleYAML))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if cfg.ClockSkew != 45*time.Second || len(cfg.Policy.Rules) != 4 || cfg.Policy.Rules[1].RateLimit != "60/m" {
		t.Fatalf("decoded %+v", cfg)
	}
	if _, err := New(cfg, Options{ResourceURI: "https://mcp.example.com/mcp"}); err != nil {
		t.Fatalf("New: %v", err)
	}
	dec = yaml.NewDecoder(strings.NewReader("issuers: []\nclockskew: 1s\n"))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err == nil {
		t.Fatal("unknown (wrong-case) key accepted")
	}
}

func TestConfigValidate(t *testing.T) {
	bad := Config{
		Issuers: []IssuerConfig{
			{Issuer: "http://idp.example.com", Algorithms: []string{"HS256", "none"}},
			{Issuer: "http://idp.example.com"},
			{Issuer: "https://ok.example", JWKSURL: "ftp://x", Audiences: []string{""}},
		},
		ClockSkew:      time.Hour,
		ScopeClaim:     []string{""},
		ScopeHierarchy: map[string][]string{"a b": {"c\"d"}},
		ResourceMetadata: ResourceMetadataConfig{
			Resource: "https://x/mcp#f", ScopesSupported: []string{"has space"},
		},
		FetchTimeout:        -time.Second,
		TokenCachePerCaller: -1,
		Policy: PolicyConfig{Rules: []RuleConfig{
			{ID: "r", Effect: "maybe"},
			{ID: "r"},
			{Effect: EffectDeny, AnyScope: []string{"x"}, Confirm: ConfirmForm},
			{Tools: []string{""}, Claims: map[string][]string{"groups": nil}},
			{ID: "confirm-prompt", Tools: []string{"t"}, Prompts: []string{"p"}, Confirm: ConfirmForm, Issuers: []string{"*"}},
			{ID: "confirm-all", Confirm: ConfirmForm, Issuers: []string{"*"}},
			{ID: "bad-issuers", Issuers: []string{"https://nope.example", "*"}},
		}},
	}
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bad config")
	}
	wants := []string{
		"issuers[0].issuer: ", `issuers[0].algorithms[0]: "HS256": want one of`, `issuers[0].algorithms[1]: "none": want one of`,
		`issuers[1].issuer: "http://idp.example.com" is already issuer 0`, "issuers[2].jwksURL: ",
		"issuers[2].audiences[0]: empty", "clockSkew: 1h0m0s: want 0s to 5m0s", "scopeClaim[0]: empty",
		`scopeHierarchy.a b: "a b" is not a scope`, `scopeHierarchy.a b[0]: "c\"d" is not a scope`,
		"resourceMetadata.resource: ", "resourceMetadata.scopesSupported[0]: ", "fetchTimeout: must not be negative",
		"tokenCachePerCaller: -1: want 1 or more",
		`policy.rules[0].effect: rule "r": "maybe": want allow or deny`, `policy.rules[1].id: "r" is already the id of rule 0`,
		"policy.rules[2].effect: a deny rule takes no anyScope", "policy.rules[3].tools[0]: empty pattern",
		"policy.rules[3].claims.groups: a claim condition needs a name and at least one value",
		`policy.rules[4].confirm: rule "confirm-prompt": applies to tool calls only`,
		`policy.rules[5].confirm: rule "confirm-all": applies to tool calls only`,
		`policy.rules[6].issuers[0]: rule "bad-issuers": "https://nope.example" is not one of auth.issuers`,
		`policy.rules[6].issuers: rule "bad-issuers": "*" (every configured issuer) stands alone`,
		`policy.rules[1].issuers: rule "r": required: with 3 issuers configured, an allow rule must say whose tokens it trusts`,
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Validate error lacks %q", w)
		}
	}
	if err := (Config{}).Validate(); err == nil || !strings.Contains(err.Error(), "at least one issuer") {
		t.Fatalf("empty config: %v", err)
	}
	if err := (Config{Issuers: []IssuerConfig{{Issuer: "http://127.0.0.1:9999"}}}).Validate(); err != nil {
		t.Fatalf("loopback http issuer rejected: %v", err)
	}
}

func TestNewNeedsAudience(t *testing.T) {
	_, err := New(Config{Issuers: []IssuerConfig{{Issuer: "https://idp.example"}}}, Options{})
	if !errors.Is(err, ErrNoAudience) {
		t.Fatalf("err = %v, want ErrNoAudience", err)
	}
}

func TestExplain(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	cfg := testPolicyConfig()
	cfg.Issuers = []IssuerConfig{{Issuer: iss.URL()}}
	s, err := New(cfg, Options{ResourceURI: testResource, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	tok := mint(t, iss, devissuer.Claims{"scope": "github:write"})
	tests := []struct {
		name   string
		req    ExplainRequest
		effect Effect
		rule   string
	}{
		{"token", ExplainRequest{Token: tok, Kind: KindTool, Upstream: "github", Name: "create_issue"}, StepUp, "gh-write"},
		{"claims", ExplainRequest{Claims: map[string]any{"sub": "x", "scope": "github:write issues"}, Kind: KindTool, Upstream: "github", Name: "create_issue"}, Allow, "gh-write"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := s.Explain(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if ex.Decision.Effect != tt.effect || ex.Decision.RuleID != tt.rule || len(ex.Rules) != len(cfg.Policy.Rules) {
				t.Fatalf("Explain = %+v", ex.Decision)
			}
			if !ex.Principal.Scopes.Has("github:read") {
				t.Fatal("hierarchy not applied in Explain")
			}
		})
	}
	if _, err := s.Explain(context.Background(), ExplainRequest{Token: devissuer.TamperSignature(tok)}); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("Explain with bad token: %v", err)
	}
	if _, err := s.Explain(context.Background(), ExplainRequest{}); !errors.Is(err, ErrExplainInput) {
		t.Fatalf("Explain without input: %v", err)
	}
}

func TestExplanationJSON(t *testing.T) {
	ex := Explanation{
		Principal: &Principal{Issuer: "i", Subject: "s", Scopes: ScopeSet{"b": {}, "a": {}}, Claims: map[string]any{}},
		Decision:  Decision{Effect: StepUp, RuleID: "r", Reason: DecisionInsufficientScope, RequiredScopes: []string{"a"}},
	}
	got, err := json.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"principal":{"issuer":"i","subject":"s","scopes":["a","b"],"claims":{},"expiresAt":"0001-01-01T00:00:00Z"},` +
		`"decision":{"effect":"step_up","ruleId":"r","reason":"insufficient_scope","requiredScopes":["a"]},"rules":null}`
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestIssuerURLHasNoQueryOrFragment: an issuer identifier has neither (OpenID Connect Discovery
// §3), and without a '#' in it "issuer#subject" names one caller only: "https://idp#t" with
// subject "alice" would otherwise share "https://idp" and "t#alice"'s key.
// TestIssuerURLHasNoControlCharacter: an issuer never holds NUL or another control character,
// which the bindings of session ids, denial handles and vault records join issuer and subject
// with (legacysession.Bind, vault.Caller.Owner): refused at configuration, and a token's "iss"
// must equal a configured issuer.
func TestIssuerURLHasNoControlCharacter(t *testing.T) {
	for _, iss := range []string{"https://idp.example/\x00", "https://idp.example/a\x00b", "https://idp.example/\x01", "https://idp.example/\x7f"} {
		if err := (Config{Issuers: []IssuerConfig{{Issuer: iss}}}).Validate(); err == nil || !strings.Contains(err.Error(), "issuers[0].issuer: ") {
			t.Errorf("issuer %q: %v, want refused", iss, err)
		}
	}
}

// TestIssuerURLHasNoUserInfo: an issuer with user info is refused (no token's "iss" carries
// one, and the issuer is named in logs and /readyz), its password never quoted.
func TestIssuerURLHasNoUserInfo(t *testing.T) {
	for _, iss := range []string{"https://user:s3cr3t-canary@idp.example/", "https://s3cr3t-canary@idp.example", "https://user:@idp.example/tenant"} {
		err := Config{Issuers: []IssuerConfig{{Issuer: iss}}}.Validate()
		if err == nil || !strings.Contains(err.Error(), "issuers[0].issuer: ") || !strings.Contains(err.Error(), "no user info") {
			t.Errorf("issuer %q: %v, want refused for its user info", iss, err)
		} else if strings.Contains(err.Error(), "s3cr3t-canary") {
			t.Errorf("issuer %q: the refusal quotes the user info: %v", iss, err)
		}
	}
}

func TestIssuerURLHasNoQueryOrFragment(t *testing.T) {
	for _, iss := range []string{"https://idp.example#t", "https://idp.example/?tenant=a", "https://idp.example/#"} {
		err := Config{Issuers: []IssuerConfig{{Issuer: iss}}}.Validate()
		if err == nil || !strings.Contains(err.Error(), "issuers[0].issuer: ") || !strings.Contains(err.Error(), "no query or fragment") {
			t.Errorf("issuer %q: %v", iss, err)
		}
	}
}

// TestIssuerSpelledTwiceIsRefused: two entries whose URLs are one issuer spelled differently
// (scheme or host case, a default port, a trailing slash) are refused, naming both entries and
// why; issuers that differ elsewhere (path case, another port, another path) are not.
func TestIssuerSpelledTwiceIsRefused(t *testing.T) {
	for _, pair := range [][2]string{
		{"https://idp.example", "https://idp.example/"},
		{"https://idp.example/", "https://idp.example"},
		{"https://idp.example/realms/a", "https://idp.example/realms/a/"},
		{"https://idp.example", "https://IDP.example"},
		{"https://idp.example", "HTTPS://idp.example"},
		{"https://idp.example", "https://idp.example:443/"},
		{"http://127.0.0.1/t", "http://127.0.0.1:80/t/"},
		{"https://[::1]/", "https://[::1]:443"},
	} {
		err := Config{Issuers: []IssuerConfig{{Issuer: "https://other.example"}, {Issuer: pair[0]}, {Issuer: pair[1]}}}.Validate()
		want := fmt.Sprintf("issuers[2].issuer: %q is auth.issuers[1].issuer %q spelled differently (%s)", pair[1], pair[0], issuerSameness)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("issuers %q: %v, want %s", pair, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "issuers[1].issuer: ") {
			t.Errorf("issuers %q: the first spelling is refused too: %v", pair, err)
		}
	}
	for _, pair := range [][2]string{
		{"https://idp.example/realms/a", "https://idp.example/realms/A"},
		{"https://idp.example", "https://idp.example:8443"},
		{"https://idp.example/a", "https://idp.example/a//"},
		{"https://idp.example", "https://idp.example.com"},
	} {
		if err := (Config{Issuers: []IssuerConfig{{Issuer: pair[0]}, {Issuer: pair[1]}}}).Validate(); err != nil && strings.Contains(err.Error(), "issuers[") {
			t.Errorf("issuers %q, two issuers, refused: %v", pair, err)
		}
	}
}

// TestIssuerSpelledNotAsIssIsRefused: an issuer whose scheme or host is not in lower case, or
// that names its scheme's default port, matches no token (their "iss", compared exactly, is in
// the lower-case form without the port, and so is the discovery document's "issuer"): refused
// with the spelling to write. A trailing slash, which some providers write in "iss", is not.
func TestIssuerSpelledNotAsIssIsRefused(t *testing.T) {
	for raw, exact := range map[string]string{
		"https://IDP.example":            "https://idp.example",
		"HTTPS://idp.example/realms/A":   "https://idp.example/realms/A",
		"Https://Idp.Example:443/t/":     "https://idp.example/t/",
		"https://idp.example:443":        "https://idp.example",
		"http://localhost:80/realms/a":   "http://localhost/realms/a",
		"https://[::1]:443/":             "https://[::1]/",
		"https://idp.example:/realms/a/": "https://idp.example/realms/a/",
	} {
		err := Config{Issuers: []IssuerConfig{{Issuer: raw}}}.Validate()
		want := fmt.Sprintf(`issuers[0].issuer: %q: write it %q, as the tokens' "iss" is written`, raw, exact)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("issuer %q: %v, want %s", raw, err, want)
		}
	}
	for _, raw := range []string{"https://idp.example", "https://idp.example/", "https://idp.example/Realms/A/", "https://idp.example:8443", "http://127.0.0.1:8080/t", "https://[::1]:8443/"} {
		if err := (Config{Issuers: []IssuerConfig{{Issuer: raw}}}).Validate(); err != nil && strings.Contains(err.Error(), "issuers[") {
			t.Errorf("issuer %q refused: %v", raw, err)
		}
	}
}
