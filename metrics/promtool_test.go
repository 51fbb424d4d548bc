package metrics

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-gateway/gateway/internal/testsupport/promcheck"
)

// ruleTestsPath holds the promtool unit tests of the shipped alert rules. Their input series
// are held to a real scrape of the gateway by internal/gateway's TestMetricsScrapeCoversShippedFiles.
var ruleTestsPath = filepath.Join("testdata", "prometheus-rules.test.yaml")

// TestAlertRulesPromtool: Prometheus' own tool loads the shipped rule file and runs its unit
// tests, so every alert fires on the input that should fire it (a first pin drift, a replica
// that stops answering, every replica gone, ...), does not on what should not (a backend's own
// errors, a non-gateway target, the traffic floor), and renders its annotations as written.
func TestAlertRulesPromtool(t *testing.T) {
	bin := promcheck.Promtool(t)
	runPromtool(t, bin, "check", "rules", rulesPath)
	runPromtool(t, bin, "test", "rules", ruleTestsPath)
}

// TestAlertRulesAllTested: every alert of the rule file has a promtool test that expects it to
// fire.
func TestAlertRulesAllTested(t *testing.T) {
	tests, err := promcheck.LoadRuleTests("..")
	if err != nil {
		t.Fatal(err)
	}
	firing := map[string]bool{}
	for _, tg := range tests.Tests {
		for _, at := range tg.AlertRuleTests {
			if len(at.ExpAlerts) > 0 {
				firing[at.Alertname] = true
			}
		}
	}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			if !firing[r.Alert] {
				t.Errorf("alert %s has no promtool test in which it fires", r.Alert)
			}
		}
	}
}

// TestDashboardQueriesParse: every dashboard query, with Grafana's variables filled in, is
// valid PromQL for Prometheus' own parser (promtool check rules, one recording rule per query).
func TestDashboardQueriesParse(t *testing.T) {
	bin := promcheck.Promtool(t)
	exprs, err := promcheck.DashboardExprs(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer("$__rate_interval", "5m", "$job", ".*", "$namespace", ".*", "$upstream", ".*")
	type record struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []record
	for _, e := range exprs {
		if strings.HasPrefix(e.Query, "label_values(") { // Grafana's, not PromQL
			continue
		}
		rules = append(rules, record{Record: "dashboard:query", Expr: vars.Replace(e.Query)})
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, bin, "check", "rules", path)
}

func runPromtool(t *testing.T, bin string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
