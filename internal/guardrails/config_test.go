package guardrails

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// Validate reports every problem at once, each at its key path.
func TestConfigValidate(t *testing.T) {
	c := &Config{
		SchemaCache:  -1,
		AllowedHosts: []string{"https://x.test"},
		Rules: []RuleConfig{
			{ID: "a", Tools: []string{"*"}, Validate: ValidateConfig{Arguments: "redact"}},
			{ID: "a", Prompts: []string{"*"}, Arguments: DirectionConfig{Secrets: "flag", Injection: "log"}},
			{},
			{ID: "bad id!", Tools: []string{"*"}, Results: DirectionConfig{PII: "maybe", Detectors: map[string]string{"nope": "log", "invalid-arguments": "log", "jwt": "block"}}},
			{Tools: []string{"*"}, Arguments: DirectionConfig{Detectors: map[string]string{"link": "log"}}},
		},
	}
	err := c.Validate()
	want := []string{
		"guardrails.schemaCache",
		"guardrails.allowedHosts[0]",
		"guardrails.rules[0].validate.arguments",
		"guardrails.rules[1].id",
		"guardrails.rules[1].arguments.secrets",
		"guardrails.rules[1].arguments.injection",
		"guardrails.rules[2]",
		"guardrails.rules[3].id",
		"guardrails.rules[3].results.pii",
		"guardrails.rules[3].results.detectors.invalid-arguments",
		"guardrails.rules[3].results.detectors.nope",
		"guardrails.rules[4].arguments.detectors.link",
	}
	var got []string
	for _, e := range configerr.List(err) {
		var ce *configerr.Error
		if !errors.As(e, &ce) || !errors.Is(e, ErrInvalidConfig) {
			t.Fatalf("not a configerr of ErrInvalidConfig: %v", e)
		}
		got = append(got, ce.Path)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems at\n%s\nwant\n%s\n(%v)", strings.Join(got, "\n"), strings.Join(want, "\n"), err)
	}
	if err := everything("flag").Validate(); err != nil {
		t.Errorf("valid configuration: %v", err)
	}
}

// Without rules there is no engine; rules are matched in order, the first wins; a detector's
// own action beats its guardrail's.
func TestRules(t *testing.T) {
	if e, err := New(&Config{}); e != nil || err != nil {
		t.Fatalf("no rules: %v %v", e, err)
	}
	e := testEngine(t, &Config{Rules: []RuleConfig{
		{ID: "gh-read", Upstream: "github", Tools: []string{"get_*"}, Results: DirectionConfig{Secrets: "redact", Detectors: map[string]string{"jwt": "off", "email": "block"}}},
		{ID: "rest", Upstream: "*", Tools: []string{"*"}, Prompts: []string{"greet"}, Results: DirectionConfig{Injection: "flag"}},
	}})
	for _, c := range []struct {
		kind           Kind
		upstream, name string
		want           string
	}{
		{KindTool, "github", "get_issue", "gh-read"},
		{KindTool, "github", "create_issue", "rest"},
		{KindPrompt, "github", "greet", "rest"},
		{KindPrompt, "github", "other", ""},
		{KindResource, "github", "file:///x", ""},
	} {
		r := e.Rule(c.kind, c.upstream, c.name)
		got := ""
		if r != nil {
			got = r.ID()
		}
		if got != c.want {
			t.Errorf("%v %s %s: rule %q, want %q", c.kind, c.upstream, c.name, got, c.want)
		}
	}
	r := e.Rule(KindTool, "github", "get_issue")
	if r.results.actions[DetJWT] != Off || r.results.actions[DetEmail] != Block || r.results.actions[DetAWSAccessKey] != Redact ||
		r.results.actions[DetPhone] != Off || r.ScansArguments() || !r.ScansResults() {
		t.Errorf("actions %v", r.results.actions)
	}
	// A message is treated with the strongest action among its findings (docs/guardrails.md).
	mixed := testEngine(t, &Config{AllowedHosts: []string{"example.com"}, Rules: []RuleConfig{{ID: "m", Tools: []string{"*"},
		Results: DirectionConfig{Secrets: "redact", PII: "block", Injection: "flag", Detectors: map[string]string{"bidi": "log"}}}}}).Rule(KindTool, "b", "t")
	for text, want := range map[string]Action{
		"\u202e https://evil.test/x":                                 Flag,
		"https://evil.test/x AKIAIOSFODNN7EXAMPLE \u202e":            Redact,
		"AKIAIOSFODNN7EXAMPLE maria@contoso.com https://evil.test/x": Block,
		"maria@contoso.com \u202e":                                   Block,
		"\u202e":                                                     Log,
	} {
		if got := mixed.ScanResult([]byte(`{"content":[{"type":"text","text":"` + text + `"}]}`)).Action; got != want {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
	}
}

// The action lists the configuration's schema and docs are made from are exactly what Validate
// accepts, setting by setting: every action in a list passes, every other is refused.
func TestActionListsAreWhatValidateAccepts(t *testing.T) {
	settings := []struct {
		name   string
		listed []string
		set    func(r *RuleConfig, a string)
	}{
		{"validate.arguments", SchemaActions(), func(r *RuleConfig, a string) { r.Validate.Arguments = a }},
		{"validate.structuredContent", SchemaActions(), func(r *RuleConfig, a string) { r.Validate.StructuredContent = a }},
		{"arguments.secrets", ArgumentActions(), func(r *RuleConfig, a string) { r.Arguments.Secrets = a }},
		{"arguments.pii", ArgumentActions(), func(r *RuleConfig, a string) { r.Arguments.PII = a }},
		{"arguments.detectors.jwt", ArgumentActions(), func(r *RuleConfig, a string) { r.Arguments.Detectors = map[string]string{"jwt": a} }},
		{"results.secrets", ResultActions(), func(r *RuleConfig, a string) { r.Results.Secrets = a }},
		{"results.pii", ResultActions(), func(r *RuleConfig, a string) { r.Results.PII = a }},
		{"results.injection", ResultActions(), func(r *RuleConfig, a string) { r.Results.Injection = a }},
		{"results.detectors.link", ResultActions(), func(r *RuleConfig, a string) { r.Results.Detectors = map[string]string{"link": a} }},
	}
	for _, s := range settings {
		for _, a := range actionNames {
			r := RuleConfig{Tools: []string{"*"}}
			s.set(&r, a)
			err := (&Config{Rules: []RuleConfig{r}}).Validate()
			listed := false
			for _, l := range s.listed {
				listed = listed || l == a
			}
			if listed != (err == nil) {
				t.Errorf("%s: %q listed %v, but Validate says %v", s.name, a, listed, err)
			}
			if err != nil && !strings.Contains(err.Error(), "want "+strings.Join(s.listed[:len(s.listed)-1], ", ")) {
				t.Errorf("%s: %q refused without naming what is accepted: %v", s.name, a, err)
			}
		}
	}
}

// TestRulesCaseFolded: for a backend with case-insensitive paths rules select resources
// case-folded, so the strict rule for file:///secret/* governs file:///SECRET/a rather than the
// lenient one after it; other backends are matched exactly. A URI with user information is
// selected as the URI without it would be too.
func TestRulesCaseFolded(t *testing.T) {
	e := testEngine(t, &Config{Rules: []RuleConfig{
		{ID: "secret", Resources: []string{"file:///secret/*"}, Results: DirectionConfig{Secrets: "block"}},
		{ID: "web", Resources: []string{"https://docs.example/secret/*"}, Results: DirectionConfig{Secrets: "block"}},
		{ID: "rest", Resources: []string{"*"}, Results: DirectionConfig{Injection: "flag"}},
	}})
	e.SetCaseInsensitive([]string{"mac"})
	for _, c := range []struct{ upstream, name, want string }{
		// User information does not take a URI out of the rule for it.
		{"lin", "https://ada@docs.example/secret/a", "web"},
		{"lin", "https://ada:pw@docs.example/secret/a?x", "web"},
		{"lin", "https://ada@docs.example/public/a", "rest"},
		{"mac", "file:///SECRET/a", "secret"},
		{"mac", "file:///public/a", "rest"},
		{"lin", "file:///SECRET/a", "rest"},
		{"lin", "file:///secret/a", "secret"},
	} {
		if r := e.Rule(KindResource, c.upstream, c.name); r == nil || r.ID() != c.want {
			t.Errorf("%s %s: rule %v, want %q", c.upstream, c.name, r, c.want)
		}
	}
}
