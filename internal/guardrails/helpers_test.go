package guardrails

import (
	"encoding/json"
	"testing"
)

// allOn is every content detector on.
func allOn() detSet {
	var s detSet
	for d := range numDetectors {
		if d.Guardrail() != Schema {
			s = s.with(d)
		}
	}
	return s
}

// textMatch is one match of a text scan, with the text it covers.
type textMatch struct {
	det  Detector
	text string
}

// scanString runs the text scanner over s with the detectors on (allowed hosts: example.com).
func scanString(tb *tables, s string, on detSet) []textMatch {
	var out []textMatch
	ts := textScan{t: []byte(s), tb: tb, on: on, hosts: newHostSet([]string{"example.com", "*.example.com"}), limit: len(s)}
	ts.emit = func(det Detector, start, end int) {
		out = append(out, textMatch{det, s[start:end]})
	}
	ts.run()
	return out
}

// testEngine compiles cfg, failing the test on an error.
func testEngine(t testing.TB, cfg *Config) *Engine {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if e == nil {
		t.Fatal("no engine")
	}
	return e
}

// everything is a rule that turns every content detector on with action a, on both
// directions where the action applies, for every tool, prompt and resource.
func everything(a string) *Config {
	argsAction := a
	if a == "flag" {
		argsAction = "log"
	}
	return &Config{
		AllowedHosts: []string{"example.com"},
		Rules: []RuleConfig{{ID: "all", Tools: []string{"*"}, Prompts: []string{"*"}, Resources: []string{"*"},
			Validate:  ValidateConfig{Arguments: "block", StructuredContent: "block"},
			Arguments: DirectionConfig{Secrets: argsAction, PII: argsAction},
			Results:   DirectionConfig{Secrets: a, PII: a, Injection: a}}},
	}
}

// jsonString renders s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
