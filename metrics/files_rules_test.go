package metrics

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// ruleFile is the Prometheus rule file format; unknown keys are rejected so
// a misspelt field (annotation, fore) fails here rather than being ignored.
type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []rule `yaml:"rules"`
	} `yaml:"groups"`
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func loadRules(t *testing.T) ruleFile {
	t.Helper()
	raw, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatalf("read rules: %v", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var f ruleFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("decode rules: %v", err)
	}
	return f
}

func TestAlertRules(t *testing.T) {
	f := loadRules(t)
	s := recorderSchema(t)
	if len(f.Groups) == 0 {
		t.Fatal("no rule groups")
	}
	var alerts, groups []string
	for _, g := range f.Groups {
		if g.Name == "" || slices.Contains(groups, g.Name) || len(g.Rules) == 0 {
			t.Errorf("group %q: needs a unique name and at least one rule", g.Name)
		}
		groups = append(groups, g.Name)
		for _, r := range g.Rules {
			checkAlert(t, s, r, alerts)
			alerts = append(alerts, r.Alert)
		}
	}
	for _, want := range []string{
		"MCPGatewayUpstreamDown", "MCPGatewayHighErrorRatio", "MCPGatewayHighLatencyP99",
		"MCPGatewayRedisErrors", "MCPGatewayMRTRRejectionSpike", "MCPGatewayAuthFailureSpike",
	} {
		if !slices.Contains(alerts, want) {
			t.Errorf("alert %s is missing", want)
		}
	}
}

func checkAlert(t *testing.T, s schema, r rule, seen []string) {
	t.Helper()
	where := fmt.Sprintf("alert %q", r.Alert)
	if r.Alert == "" || r.Record != "" || slices.Contains(seen, r.Alert) {
		t.Errorf("%s: every rule must be an alert with a unique name", where)
	}
	if d, err := time.ParseDuration(r.For); err != nil || d <= 0 {
		t.Errorf("%s: for %q is not a positive duration", where, r.For)
	}
	if sev := r.Labels["severity"]; !slices.Contains([]string{"critical", "warning", "info"}, sev) {
		t.Errorf("%s: severity %q, want critical, warning or info", where, sev)
	}
	for _, key := range []string{"summary", "description"} {
		if r.Annotations[key] == "" {
			t.Errorf("%s: annotation %s is missing", where, key)
		}
	}
	if len(s.check(t, where, r.Expr)) == 0 {
		t.Errorf("%s: expr uses no gateway metric", where)
	}
}
