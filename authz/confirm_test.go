package authz

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestConfirmModeYAML: confirm reads true, false, form and url; anything else is an error, so a
// typo cannot silently turn a confirmation off.
func TestConfirmModeYAML(t *testing.T) {
	for in, want := range map[string]ConfirmMode{
		"confirm: true": ConfirmForm, "confirm: form": ConfirmForm, "confirm: url": ConfirmURL,
		"confirm: false": ConfirmNone, "tools: [x]": ConfirmNone,
	} {
		var r RuleConfig
		dec := yaml.NewDecoder(strings.NewReader(in))
		dec.KnownFields(true)
		if err := dec.Decode(&r); err != nil || r.Confirm != want {
			t.Errorf("%s: %q %v, want %q", in, r.Confirm, err, want)
		}
	}
	for _, in := range []string{"confirm: yes-please", "confirm: URL", "confirm: 1", "confirm: [url]"} {
		var r RuleConfig
		if err := yaml.NewDecoder(strings.NewReader(in)).Decode(&r); err == nil {
			t.Errorf("%s accepted as %q", in, r.Confirm)
		}
	}
	for in, want := range map[string]ConfirmMode{`true`: ConfirmForm, `"url"`: ConfirmURL, `false`: ConfirmNone, `null`: ConfirmNone} {
		var m ConfirmMode
		if err := json.Unmarshal([]byte(in), &m); err != nil || m != want {
			t.Errorf("JSON %s: %q %v", in, m, err)
		}
	}
	var m ConfirmMode
	if err := json.Unmarshal([]byte(`"sure"`), &m); err == nil {
		t.Error(`JSON "sure" accepted`)
	}
}

// TestConfirmURLRules: a confirm: url rule's decision says so, with its client-form fallback;
// confirmFallback is refused on anything else, and its former value "form" is refused saying
// why it was renamed.
func TestConfirmURLRules(t *testing.T) {
	pc := PolicyConfig{Rules: []RuleConfig{
		{ID: "page", Upstream: "files", Tools: []string{"rm"}, Confirm: ConfirmURL},
		{ID: "page-or-form", Upstream: "files", Tools: []string{"mv"}, Confirm: ConfirmURL, ConfirmFallback: FallbackClientForm},
		{ID: "form", Upstream: "files", Tools: []string{"cp"}, Confirm: ConfirmForm},
	}}
	p, err := NewPolicy(pc, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr := &Principal{Issuer: "https://iss", Subject: "alice"}
	for tool, want := range map[string]Decision{
		"rm": {Confirm: true, ConfirmURL: true},
		"mv": {Confirm: true, ConfirmURL: true, ConfirmFallbackClientForm: true},
		"cp": {Confirm: true},
	} {
		d := p.Decide(context.Background(), pr, KindTool, "files", tool)
		if d.Effect != Allow || d.Confirm != want.Confirm || d.ConfirmURL != want.ConfirmURL || d.ConfirmFallbackClientForm != want.ConfirmFallbackClientForm {
			t.Errorf("%s: %+v", tool, d)
		}
	}
	for _, r := range []RuleConfig{
		{ID: "bad-fallback", Tools: []string{"x"}, Confirm: ConfirmURL, ConfirmFallback: "email"},
		{ID: "fallback-without-url", Tools: []string{"x"}, Confirm: ConfirmForm, ConfirmFallback: FallbackClientForm},
		{ID: "url-on-prompts", Prompts: []string{"x"}, Confirm: ConfirmURL},
	} {
		if err := (PolicyConfig{Rules: []RuleConfig{r}}).validate(); err == nil || !strings.Contains(err.Error(), r.ID) {
			t.Errorf("%s: %v", r.ID, err)
		}
	}
	old := PolicyConfig{Rules: []RuleConfig{{ID: "old", Tools: []string{"x"}, Confirm: ConfirmURL, ConfirmFallback: "form"}}}
	if err := old.validate(); err == nil || !strings.Contains(err.Error(), "clientForm") || !strings.Contains(err.Error(), "without the user") {
		t.Errorf("confirmFallback: form: %v", err)
	}
}
