package metrics

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/promcheck"
)

func loadRules(t *testing.T) promcheck.RuleFile {
	t.Helper()
	f, err := promcheck.LoadRules(rulesPath)
	if err != nil {
		t.Fatal(err)
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
		"MCPGatewayPinDrift", "MCPGatewayTargetDown", "MCPGatewayAbsent", "MCPGatewayInterceptorCircuitOpen",
		"MCPGatewayUserOAuthRefreshUnavailable",
	} {
		if !slices.Contains(alerts, want) {
			t.Errorf("alert %s is missing", want)
		}
	}
}

func checkAlert(t *testing.T, s schema, r promcheck.Rule, seen []string) {
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

// TestAlertRulesDocumented: docs/observability.md's table of alerts lists exactly the alerts of
// the rule file, so an operator reading what may fire reads every one that can.
func TestAlertRulesDocumented(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "observability.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\s*\\| `(MCPGateway[A-Za-z0-9]+)`")
	var documented, shipped []string
	for _, m := range row.FindAllStringSubmatch(string(raw), -1) {
		documented = append(documented, m[1])
	}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			shipped = append(shipped, r.Alert)
		}
	}
	if len(shipped) == 0 {
		t.Fatal("the rule file has no alerts")
	}
	slices.Sort(documented)
	slices.Sort(shipped)
	if documented = slices.Compact(documented); !slices.Equal(documented, shipped) {
		t.Errorf("docs/observability.md lists the alerts\n%v\nthe rule file has\n%v", documented, shipped)
	}
}

// TestAlertRunbooks: every alert links, by its runbook_url annotation, to the entry of
// docs/observability.md that says what to do when it fires, an entry with text under it; and
// every entry there is an alert of the rule file, so none outlives its alert.
func TestAlertRunbooks(t *testing.T) {
	const runbooks = "https://github.com/mcp-gateway/gateway/blob/main/docs/observability.md#"
	raw, err := os.ReadFile(filepath.Join("..", "docs", "observability.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries := runbookEntries(string(raw))
	if len(entries) == 0 {
		t.Fatal("docs/observability.md has no runbook entry (#### <alert>)")
	}
	shipped := map[string]bool{}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			shipped[r.Alert] = true
			if got, want := r.Annotations["runbook_url"], runbooks+strings.ToLower(r.Alert); got != want {
				t.Errorf("alert %s: runbook_url %q, want %q", r.Alert, got, want)
			}
			if body, ok := entries[r.Alert]; !ok {
				t.Errorf("alert %s: docs/observability.md has no entry #### %s", r.Alert, r.Alert)
			} else if len(strings.Fields(body)) < 10 {
				t.Errorf("alert %s: its runbook entry says next to nothing: %q", r.Alert, body)
			}
		}
	}
	for name := range entries {
		if !shipped[name] {
			t.Errorf("docs/observability.md has a runbook entry for %s, which the rule file has no alert of", name)
		}
	}
}

// runbookEntries maps each "#### MCPGateway..." heading of a Markdown document to the text under
// it, up to the next heading.
func runbookEntries(doc string) map[string]string {
	out := map[string]string{}
	name := ""
	for line := range strings.SplitSeq(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "#### MCPGateway"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "####"))
			out[name] = ""
		case strings.HasPrefix(line, "#"):
			name = ""
		case name != "":
			out[name] += line + "\n"
		}
	}
	return out
}
