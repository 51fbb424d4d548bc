package promcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Paths of the shipped files, relative to the repository root.
const (
	RulesFile     = "helm/mcp-gateway/files/prometheus-rules.yaml"
	DashboardFile = "helm/mcp-gateway/files/grafana-dashboard.json"
	// RuleTestsFile holds the promtool unit tests of RulesFile.
	RuleTestsFile = "metrics/testdata/prometheus-rules.test.yaml"
)

// RuleFile is the Prometheus rule file format. Unknown keys are errors, so a misspelt field
// (annotation, fore) fails a test instead of being ignored by Prometheus' loader.
type RuleFile struct {
	Groups []RuleGroup `yaml:"groups"`
}

// RuleGroup is one group of rules.
type RuleGroup struct {
	Name     string `yaml:"name"`
	Interval string `yaml:"interval"`
	Rules    []Rule `yaml:"rules"`
}

// Rule is one alerting or recording rule.
type Rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// LoadRules decodes a rule file strictly.
func LoadRules(path string) (RuleFile, error) {
	var f RuleFile
	return f, decodeYAML(path, &f)
}

func decodeYAML(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Expr is one PromQL expression of a shipped file and where it is.
type Expr struct {
	Where, Query string
	// Templated are the labels an alert's annotations read from the expression's result.
	Templated []string
}

// RuleExprs returns the expression of every rule with the labels its annotations read.
func RuleExprs(f RuleFile) []Expr {
	var out []Expr
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			e := Expr{Where: "rule " + r.Alert + r.Record, Query: r.Expr}
			for _, a := range r.Annotations {
				e.Templated = append(e.Templated, TemplateLabels(a)...)
			}
			out = append(out, e)
		}
	}
	return out
}

// DashboardExprs returns every query of a Grafana dashboard: panel targets (rows included) and
// template variables.
func DashboardExprs(path string) ([]Expr, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d any
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []Expr
	walkJSON(d, "", func(where, key string, v any) {
		s, ok := v.(string)
		switch {
		case !ok:
		case key == "expr":
			out = append(out, Expr{Where: where, Query: s})
		case key == "query" && strings.Contains(where, "templating"):
			out = append(out, Expr{Where: where, Query: s})
		}
	})
	return out, nil
}

// walkJSON calls visit for every member of every object, with a path naming the panel titles
// on the way for error messages.
func walkJSON(v any, where string, visit func(where, key string, v any)) {
	switch x := v.(type) {
	case map[string]any:
		if title, ok := x["title"].(string); ok {
			where += "/" + title
		}
		for k, child := range x {
			visit(where, k, child)
			walkJSON(child, where+keyPath(k), visit)
		}
	case []any:
		for _, child := range x {
			walkJSON(child, where, visit)
		}
	}
}

// keyPath keeps the structural keys that say which part of the dashboard a query is in.
func keyPath(k string) string {
	if k == "templating" {
		return "/templating"
	}
	return ""
}

// RuleTests is the part of a promtool unit test file the checks read.
type RuleTests struct {
	RuleFiles          []string   `yaml:"rule_files"`
	EvaluationInterval string     `yaml:"evaluation_interval"`
	Tests              []RuleTest `yaml:"tests"`
}

// RuleTest is one test group: input series and the alerts expected at given times.
type RuleTest struct {
	Name        string `yaml:"name"`
	Interval    string `yaml:"interval"`
	InputSeries []struct {
		Series string `yaml:"series"`
		Values string `yaml:"values"`
	} `yaml:"input_series"`
	AlertRuleTests []struct {
		EvalTime  string `yaml:"eval_time"`
		Alertname string `yaml:"alertname"`
		ExpAlerts []struct {
			ExpLabels      map[string]string `yaml:"exp_labels"`
			ExpAnnotations map[string]string `yaml:"exp_annotations"`
		} `yaml:"exp_alerts"`
	} `yaml:"alert_rule_test"`
}

// LoadRuleTests decodes a promtool unit test file strictly and checks that it tests the rule
// file the chart ships.
func LoadRuleTests(root string) (RuleTests, error) {
	var f RuleTests
	path := filepath.Join(root, RuleTestsFile)
	if err := decodeYAML(path, &f); err != nil {
		return f, err
	}
	for _, rf := range f.RuleFiles {
		if filepath.Clean(filepath.Join(filepath.Dir(path), rf)) != filepath.Join(root, RulesFile) {
			return f, fmt.Errorf("%s: rule file %s is not %s", path, rf, RulesFile)
		}
	}
	return f, nil
}

var seriesRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{.*\})?$`)

// ParseSeries splits a series written as name{a="b",...} into its name and labels.
func ParseSeries(s string) (string, map[string]string, error) {
	m := seriesRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", nil, fmt.Errorf("series %q: not name{labels}", s)
	}
	labels := map[string]string{}
	for _, mm := range matcherRE.FindAllStringSubmatch(m[2], -1) {
		if mm[2] != "=" {
			return "", nil, fmt.Errorf("series %q: %s is not an equality", s, mm[1])
		}
		labels[mm[1]] = mm[3]
	}
	return m[1], labels, nil
}
