package metrics

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/promcheck"
)

func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	s := recorderSchema(t)
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d, want >= 36", d.SchemaVersion)
	}
	if d.UID == "" {
		t.Error("dashboard has no uid; provisioning would mint a new one on every load")
	}
	hasDatasource := false
	for _, v := range d.Templating.List {
		if v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus" {
			hasDatasource = true
		}
		if q, ok := v.Query.(map[string]any); ok {
			s.check(t, "variable "+v.Name, fmt.Sprint(q["query"]))
		}
	}
	if !hasDatasource {
		t.Error(`no "datasource" template variable of type datasource over prometheus`)
	}
	used := map[string]bool{}
	ids := map[int]bool{}
	for _, p := range flatten(d.Panels) {
		checkPanel(t, s, p, ids, used)
	}
	shown := append(append(MetricNames(), LegacyMetricNames()...), NameToolSearches, NameToolSearchHits,
		NameToolSearchCalls, NameToolListBytes, NameApprovalPages, NameApprovalSignIns,
		NameApprovalDecisions, NameApprovalRefusals, NameInterceptorCalls, NameInterceptorErrors,
		NameInterceptorDuration, NameInterceptorCircuit, NameGuardrailFindings, "mcp_gateway_config_reloads_total",
		"mcp_gateway_config_last_reload_successful", NameUserOAuthRefreshes)
	for _, name := range shown {
		if !used[name] {
			t.Errorf("no dashboard panel shows %s", name)
		}
	}
}

func flatten(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, flatten(p.Panels)...)
	}
	return out
}

func checkPanel(t *testing.T, s schema, p panel, ids map[int]bool, used map[string]bool) {
	t.Helper()
	where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
	if p.ID <= 0 || ids[p.ID] {
		t.Errorf("%s: missing or duplicate id", where)
	}
	ids[p.ID] = true
	if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 {
		t.Errorf("%s: gridPos %+v outside the 24-column grid", where, p.GridPos)
	}
	if p.Type == "row" {
		return
	}
	if p.Title == "" || p.Datasource == nil || p.Datasource.UID != "${datasource}" {
		t.Errorf("%s: needs a title and the ${datasource} variable as datasource", where)
	}
	if len(p.Targets) == 0 {
		t.Errorf("%s: no queries", where)
	}
	var refs []string
	for _, tg := range p.Targets {
		if tg.Expr == "" || tg.RefID == "" || slices.Contains(refs, tg.RefID) {
			t.Errorf("%s: target %q needs an expr and a unique refId", where, tg.RefID)
		}
		refs = append(refs, tg.RefID)
		fams := s.check(t, where, tg.Expr)
		if len(fams) == 0 {
			t.Errorf("%s: query %q uses no gateway metric", where, tg.Expr)
		}
		for _, f := range fams {
			used[f] = true
		}
	}
}

// TestDashboardFiltersByNamespaceAndJob: every query of the dashboard, its variables' too, takes
// the gateway's series of the chosen namespaces and jobs only. A job is named after the scraped
// Service, which is named after the release, so the same release installed in two namespaces
// (staging and production) is one job: without the namespace the panels would add the two up.
// The variables narrow in order: the namespace variable lists every namespace, the job variable
// the jobs of the chosen namespaces.
func TestDashboardFiltersByNamespaceAndJob(t *testing.T) {
	d := loadDashboard(t)
	filters := []string{"namespace", "job"} // each variable narrowed by the ones before it
	var exprs []string
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if q, ok := v.Query.(map[string]any); ok {
			exprs = append(exprs, fmt.Sprint(q["query"]))
		}
	}
	for _, p := range flatten(d.Panels) {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, name := range filters {
		if !vars[name] {
			t.Errorf("the dashboard has no %s variable", name)
		}
	}
	for _, e := range exprs {
		need := filters
		for i, label := range filters {
			if strings.HasPrefix(e, "label_values(") && strings.HasSuffix(e, ", "+label+")") {
				need = filters[:i]
			}
		}
		for _, sel := range promcheck.Parse(e).Selectors {
			for _, label := range need {
				if !slices.Contains(sel.Matchers, promcheck.Matcher{Label: label, Op: "=~", Value: "$" + label}) {
					t.Errorf("%s in %q: no %s=~\"$%s\"", sel.Metric, e, label, label)
				}
			}
		}
	}
}
