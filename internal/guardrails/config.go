package guardrails

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// Config is the guardrails section of the gateway's configuration (docs/guardrails.md). Absent,
// or without rules, no guardrail runs and the request path does not look at them.
type Config struct {
	// Rules are matched in order against what a request names (its backend and the backend-side
	// tool name, prompt name or resource URI), in the terms policy rules use; the first that
	// matches decides every guardrail of the request. A request no rule matches is not checked.
	Rules []RuleConfig `yaml:"rules"`
	// AllowedHosts are the hosts links in results may point to without a finding of the link
	// detector, for every rule that sets none: host names, or globs in which '*' matches any run
	// of characters ("*.example.com"). Compared without regard to case.
	AllowedHosts []string `yaml:"allowedHosts"`
	// SchemaCache bounds the compiled JSON Schemas kept (each a tool's inputSchema or
	// outputSchema, by content or by pin fingerprint); the least recently used is dropped.
	// Default DefaultSchemaCache.
	SchemaCache int `yaml:"schemaCache"`
}

// DefaultSchemaCache is Config.SchemaCache's default.
const DefaultSchemaCache = 1024

// RuleConfig is one guardrail rule: which requests it covers and what each guardrail does.
type RuleConfig struct {
	// ID names the rule in audit lines, metrics and _meta annotations. Default "rule-<index>".
	ID string `yaml:"id"`
	// Upstream is a glob over backend names. Default "*". Written as a name (no '*' or
	// '?'), it must be a configured backend's.
	Upstream string `yaml:"upstream"`
	// Tools are globs over backend-side tool names: the rule covers tools/call of those tools.
	Tools []string `yaml:"tools"`
	// Prompts are globs over backend-side prompt names: the rule covers prompts/get.
	Prompts []string `yaml:"prompts"`
	// Resources are globs over backend-side resource URIs: the rule covers resources/read.
	Resources []string `yaml:"resources"`
	// Validate is schema validation of a tools/call (the schema guardrail).
	Validate ValidateConfig `yaml:"validate"`
	// Arguments are the detectors run on a request's arguments (tools/call, prompts/get) before
	// it is forwarded: secrets and pii.
	Arguments DirectionConfig `yaml:"arguments"`
	// Results are the detectors run on what a backend answers (a tools/call result, prompts/get
	// messages, resources/read contents, a JSON-RPC error, and the notifications relayed while
	// the request runs) before the client sees it: secrets, pii and injection.
	Results DirectionConfig `yaml:"results"`
	// AllowedHosts, when set, replace Config.AllowedHosts for this rule.
	AllowedHosts []string `yaml:"allowedHosts"`
}

// ValidateConfig is the schema guardrail of a rule.
type ValidateConfig struct {
	// Arguments checks a tools/call's arguments against the tool's inputSchema (its pinned
	// definition when the backend is pinned) before forwarding: "off" (default), "log" or
	// "block" (refused with a tool error naming the failing path, never the value).
	Arguments string `yaml:"arguments"`
	// StructuredContent checks a tool result's structuredContent against the tool's
	// outputSchema: "off" (default), "log" or "block" (the result is replaced with a tool error).
	StructuredContent string `yaml:"structuredContent"`
}

// DirectionConfig is the detectors of one direction: an action per guardrail, and per detector
// where one should differ from its guardrail's.
type DirectionConfig struct {
	// Secrets is the action on credentials: "off" (default), "log", "flag" (results only),
	// "redact" or "block".
	Secrets string `yaml:"secrets"`
	// PII is the action on personal data, as Secrets.
	PII string `yaml:"pii"`
	// Injection is the action on injection markers (results only), as Secrets.
	Injection string `yaml:"injection"`
	// Detectors sets the action of single detectors by name ("jwt", "email", "link", …; see
	// docs/guardrails.md), over their guardrail's: "off" turns one off, any other action turns
	// one on whatever its guardrail says.
	Detectors map[string]string `yaml:"detectors"`
}

// ErrInvalidConfig marks every problem Validate reports.
var ErrInvalidConfig = errors.New("guardrails: invalid configuration")

// Enabled reports whether any rule is configured: without one the guardrails cost nothing.
func (c *Config) Enabled() bool { return c != nil && len(c.Rules) > 0 }

// Validate reports every problem at once, each a *configerr.Error naming the setting's key path
// (guardrails.rules[0].results.detectors.jwt). It changes nothing.
func (c *Config) Validate() error {
	if c == nil {
		return nil
	}
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, configerr.Of(ErrInvalidConfig, path, format, args...))
	}
	if c.SchemaCache < 0 {
		add("guardrails.schemaCache", "must not be negative")
	}
	checkHosts("guardrails.allowedHosts", c.AllowedHosts, add)
	ids := map[string]int{}
	for i := range c.Rules {
		r := &c.Rules[i]
		at := fmt.Sprintf("guardrails.rules[%d]", i)
		if first, dup := ids[r.ruleID(i)]; dup {
			add(at+".id", "%q is also the id of rules[%d]; ids are unique", r.ruleID(i), first)
		} else {
			ids[r.ruleID(i)] = i
		}
		r.validate(at, add)
	}
	return errors.Join(errs...)
}

// ruleID is the rule's id, or its default.
func (r *RuleConfig) ruleID(i int) string {
	if r.ID != "" {
		return r.ID
	}
	return fmt.Sprintf("rule-%d", i)
}

func (r *RuleConfig) validate(at string, add func(string, string, ...any)) {
	if len(r.Tools) == 0 && len(r.Prompts) == 0 && len(r.Resources) == 0 {
		add(at, "names no tools, prompts or resources: the rule would cover nothing")
	}
	if r.ID != "" && !validLabel(r.ID) {
		add(at+".id", "%q: want letters, digits, '.', '_' or '-' (it labels metrics)", r.ID)
	}
	for _, f := range []struct{ key, val string }{
		{"validate.arguments", r.Validate.Arguments}, {"validate.structuredContent", r.Validate.StructuredContent},
	} {
		if a, ok := parseAction(orOff(f.val)); !ok || !slices.Contains(schemaActions, a) {
			add(at+"."+f.key, "unknown action %q: want %s", f.val, wantActions(schemaActions))
		}
	}
	r.Arguments.validate(at+".arguments", false, add)
	r.Results.validate(at+".results", true, add)
	checkHosts(at+".allowedHosts", r.AllowedHosts, add)
}

// validate checks one direction's actions: results take every action and every content
// guardrail; arguments neither flag (nothing carries the annotation) nor injection.
func (d *DirectionConfig) validate(at string, results bool, add func(string, string, ...any)) {
	accepted := argumentActions
	if results {
		accepted = resultActions
	}
	check := func(path, val string) (Action, bool) {
		a, ok := parseAction(orOff(val))
		if !ok || !slices.Contains(accepted, a) {
			add(path, "unknown action %q: want %s", val, wantActions(accepted))
			return Off, false
		}
		return a, true
	}
	check(at+".secrets", d.Secrets)
	check(at+".pii", d.PII)
	if a, ok := check(at+".injection", d.Injection); ok && a != Off && !results {
		add(at+".injection", "injection markers are looked for in results only")
	}
	for _, name := range sortedKeys(d.Detectors) {
		det, ok := detectorByName(name)
		if !ok || det.Guardrail() == Schema {
			add(at+".detectors."+name, "unknown detector %q: want one of %s", name, contentDetectorNames())
			continue
		}
		a, ok := check(at+".detectors."+name, d.Detectors[name])
		if ok && a != Off && !results && det.Guardrail() == Injection {
			add(at+".detectors."+name, "injection markers are looked for in results only")
		}
	}
}

func checkHosts(at string, hosts []string, add func(string, string, ...any)) {
	for i, h := range hosts {
		if h == "" || strings.ContainsAny(h, "/:@ \t?#[]") {
			add(fmt.Sprintf("%s[%d]", at, i), "%q: want a host name or a glob over host names, without scheme, port or path", h)
		}
	}
}

func orOff(s string) string {
	if s == "" {
		return "off"
	}
	return s
}

// validLabel reports whether s may label a metric series: 1 to 64 letters, digits, '.', '_', '-'.
func validLabel(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// contentDetectorNames lists the detectors a direction may name.
func contentDetectorNames() string { return strings.Join(ContentDetectors(), ", ") }

// ContentDetectors returns the names a rule's detectors settings take: every detector but the
// schema guardrail's.
func ContentDetectors() []string {
	var names []string
	for i := range detectorTable {
		if detectorTable[i].g != Schema {
			names = append(names, detectorTable[i].name)
		}
	}
	return names
}

// RuleIDs returns the rules' ids in order, defaults included: the closed set of the rule
// label.
func (c *Config) RuleIDs() []string {
	if c == nil {
		return nil
	}
	out := make([]string, len(c.Rules))
	for i := range c.Rules {
		out[i] = c.Rules[i].ruleID(i)
	}
	return out
}

// ValidatesSchemas reports whether any rule validates against tool schemas, or redacts
// arguments or results (arguments or a structuredContent redacted are checked against the
// tool's inputSchema or outputSchema whatever the rule validates): then the gateway keeps
// every listed tool's schemas in its tool index.
func (c *Config) ValidatesSchemas() bool {
	if c == nil {
		return false
	}
	for i := range c.Rules {
		v := &c.Rules[i].Validate
		a, _ := parseAction(orOff(v.Arguments))
		o, _ := parseAction(orOff(v.StructuredContent))
		if a != Off || o != Off || c.Rules[i].Results.redacts() || c.Rules[i].Arguments.redacts() {
			return true
		}
	}
	return false
}

// redacts reports whether the direction redacts anything.
func (dc *DirectionConfig) redacts() bool {
	is := func(s string) bool { a, _ := parseAction(s); return s != "" && a == Redact }
	if is(dc.Secrets) || is(dc.PII) || is(dc.Injection) {
		return true
	}
	for _, a := range dc.Detectors {
		if is(a) {
			return true
		}
	}
	return false
}
