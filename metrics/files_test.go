package metrics

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The chart ships these files; the tests keep them in step with the recorder.
var (
	dashboardPath = filepath.Join("..", "helm", "mcp-gateway", "files", "grafana-dashboard.json")
	rulesPath     = filepath.Join("..", "helm", "mcp-gateway", "files", "prometheus-rules.yaml")
)

// Labels Prometheus or the scrape configuration add to every series.
var targetLabels = []string{"job", "instance", "namespace", "pod", "service", "container", "endpoint"}

var (
	selectorRE = regexp.MustCompile(`\b(mcp_gateway_[a-z0-9_]+)\s*(\{[^}]*\})?`)
	matcherRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"`)
	plainAltRE = regexp.MustCompile(`^[a-z_/|]*$`)
)

// schema describes what the recorder exports: per family its label names,
// and per label the closed set of values.
type schema struct {
	labels map[string][]string
	values map[string][]string
}

func recorderSchema(t *testing.T) schema {
	t.Helper()
	r, reg := newTestRecorder(t, Options{Upstreams: []string{"a"}})
	touchEverything(r)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	s := schema{labels: map[string][]string{}, values: map[string][]string{
		"method":   append(Methods(), Other),
		"outcome":  append(Outcomes(), Other),
		"reason":   append(append(AuthReasons(), RejectReasons()...), "", Other),
		"decision": append(append(Decisions(), RateDecisions()...), Other),
		"event":    append(Events(), Other),
		"result":   {cacheHit, cacheMiss, Other},
		"op":       append(RedisOps(), Other),
		"cause":    append(DropCauses(), Other),
	}}
	for _, mf := range mfs {
		s.labels[mf.GetName()] = []string{}
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			s.labels[mf.GetName()] = append(s.labels[mf.GetName()], lp.GetName())
		}
	}
	return s
}

// family maps a series name to its family: histogram series carry suffixes.
func (s schema) family(name string) (string, bool) {
	if _, ok := s.labels[name]; ok {
		return name, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, found := strings.CutSuffix(name, suffix)
		if _, ok := s.labels[base]; found && ok && strings.HasSuffix(base, "_seconds") {
			return base, true
		}
	}
	return "", false
}

// check reports every selector in expr that names an unknown metric, a label
// the metric lacks, or a value outside the label's closed set. It returns the
// families used.
func (s schema) check(t *testing.T, where, expr string) []string {
	t.Helper()
	var used []string
	for _, m := range selectorRE.FindAllStringSubmatch(expr, -1) {
		fam, ok := s.family(m[1])
		if !ok {
			t.Errorf("%s: %s is not a metric the recorder registers", where, m[1])
			continue
		}
		used = append(used, fam)
		allowed := append(slices.Clone(s.labels[fam]), targetLabels...)
		if strings.HasSuffix(m[1], "_bucket") {
			allowed = append(allowed, "le")
		}
		for _, mm := range matcherRE.FindAllStringSubmatch(m[2], -1) {
			s.checkMatcher(t, where, m[1], allowed, mm[1], mm[2], mm[3])
		}
	}
	return used
}

func (s schema) checkMatcher(t *testing.T, where, metric string, allowed []string, label, op, value string) {
	t.Helper()
	if !slices.Contains(allowed, label) {
		t.Errorf("%s: %s has no label %q", where, metric, label)
		return
	}
	closed, ok := s.values[label]
	if !ok || strings.Contains(value, "$") {
		return
	}
	if op == "=~" || op == "!~" {
		if !plainAltRE.MatchString(value) {
			return
		}
		for _, v := range strings.Split(value, "|") {
			if !slices.Contains(closed, v) {
				t.Errorf("%s: %s{%s%s%q}: %q is not a %s value", where, metric, label, op, value, v, label)
			}
		}
		return
	}
	if !slices.Contains(closed, value) {
		t.Errorf("%s: %s{%s%s%q}: not a %s value", where, metric, label, op, value, label)
	}
}

// Only the fields the tests read; unknown fields are ignored on purpose, since
// Grafana adds many.
type dashboard struct {
	SchemaVersion int `json:"schemaVersion"`
	UID           string
	Templating    struct {
		List []struct {
			Name, Type string
			Query      any
		}
	}
	Panels []panel
}

type panel struct {
	ID          int
	Type, Title string
	Datasource  *struct{ Type, UID string }
	GridPos     struct{ X, Y, W, H int }
	Targets     []struct {
		Expr, RefID string
		Datasource  *struct{ Type, UID string }
	}
	Panels []panel
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatalf("read dashboard: %v", err)
	}
	if !json.Valid(raw) {
		t.Fatal("dashboard is not valid JSON")
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("decode dashboard: %v", err)
	}
	return d
}
