package metrics

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/internal/testsupport/promcheck"
	"github.com/mcp-gateway/gateway/internal/useroauth"
)

// The chart ships these files; the tests keep them in step with the recorder.
var (
	dashboardPath = filepath.Join("..", promcheck.DashboardFile)
	rulesPath     = filepath.Join("..", promcheck.RulesFile)
)

// plainAltRE matches a regular expression that is only alternatives of plain
// label values, whose values can then be checked one by one.
var plainAltRE = regexp.MustCompile(`^[a-z_/|-]*$`)

// schema describes what the recorders export: per family its label names, whether it is a
// histogram, and the closed set of values of each of its labels that has one.
type schema struct {
	labels     map[string][]string
	histograms map[string]bool
	values     map[string]map[string][]string // family → label → values
}

// recorderSchema gathers every recorder of the package (the gateway's, the
// approval page's and tool search's) after touching every family once.
func recorderSchema(t *testing.T) schema {
	t.Helper()
	r, reg := newTestRecorder(t, Options{Upstreams: []string{"a"}})
	touchEverything(r)
	r.LegacySession(LegacySessionOpened)
	r.LegacyRequest("tools/call", outcome.OK)
	r.LegacyAsk(AskKindConfirm, AskAnswered)
	r.LegacyAsksPending(1)
	if _, err := NewApproval(reg); err != nil {
		t.Fatal(err)
	}
	ts, err := NewToolsets(reg, ToolsetOptions{Sets: []string{"s"}, Upstreams: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Search("s", 1)
	ts.ContextBytes("s", 10, 1)
	ts.CallTool("a", "t", outcome.OK)
	gr, err := NewGuardrails(reg)
	if err != nil {
		t.Fatal(err)
	}
	gr.Check(guardrails.Secrets, guardrails.DirResult, guardrails.Redact, false)
	gr.Findings(guardrails.DetJWT, guardrails.DirResult, guardrails.Redact, 1)
	gr.Duration(CheckContent, guardrails.DirResult, time.Millisecond)
	if _, err := NewReloads(reg, time.Now()); err != nil {
		t.Fatal(err)
	}
	ic, err := NewInterceptors(reg, []string{"i"})
	if err != nil {
		t.Fatal(err)
	}
	ic.Invocation("i", intercept.PhaseNameRequest, intercept.ResultError, intercept.Reasons()[0], time.Millisecond)
	if _, err := NewUserOAuth(reg, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	s := schema{labels: map[string][]string{}, histograms: map[string]bool{}, values: familyValues()}
	for _, mf := range mfs {
		s.labels[mf.GetName()] = []string{}
		s.histograms[mf.GetName()] = mf.GetType() == dto.MetricType_HISTOGRAM
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			s.labels[mf.GetName()] = append(s.labels[mf.GetName()], lp.GetName())
		}
	}
	s.checkValues(t, mfs)
	return s
}

// familyValues returns, per family, the closed set of each label that has one. Families share
// label names with different sets (a rate-limit decision is allowed, limited or error; an
// authorization decision allow, step_up or hidden), so a matcher is held to the values of its
// own metric: held to every value any family gives the label, a rate-limit panel selecting
// decision="allow" would pass, and show nothing.
func familyValues() map[string]map[string][]string {
	closed := func(vs ...[]string) []string { return append(slices.Concat(vs...), Other) }
	methods, outcomes := closed(Methods()), closed(Outcomes())
	evictions := map[string][]string{"cache": closed(evictionCaches[:]), "cause": {EvictionShare, EvictionTotal}}
	return map[string]map[string][]string{
		NameRequests:           {"method": methods, "outcome": outcomes},
		NameRequestDuration:    {"method": methods},
		NameClientWait:         {"method": methods},
		NameToolCalls:          {"outcome": outcomes},
		NameUpstreamRequests:   {"method": methods, "outcome": outcomes},
		NameUpstreamDuration:   {"method": methods},
		NameAuthFailures:       {"reason": closed(AuthReasons())},
		NameAuthzDecisions:     {"decision": closed(Decisions())},
		NameMRTREvents:         {"event": closed(Events()), "reason": closed(RejectReasons(), []string{ReasonNone})},
		NameRateLimitDecisions: {"decision": closed(RateDecisions())},
		NameListCacheRequests:  {"result": closed([]string{cacheHit, cacheMiss})},
		NameRedisErrors:        {"op": closed(RedisOps())},
		NameListenDropped:      {"cause": closed(DropCauses())},
		NameClientRefusals:     {"reason": closed(ClientRefusalReasons())},
		NameCacheEvictions:     evictions,
		NamePinDrift:           {"class": closed(PinClasses()), "action": closed(PinActions())},
		NameLegacySessions:     {"event": closed(LegacySessionEvents())},
		NameLegacyRequests:     {"method": closed(LegacyMethods()), "outcome": outcomes},
		NameLegacyAsks:         {"kind": closed(AskKinds()), "outcome": closed(AskOutcomes())},
		NameApprovalSignIns:    {"result": {"ok", "failed"}},
		NameApprovalDecisions:  {"decision": closed([]string{string(approval.Approved), string(approval.Denied)})},
		NameApprovalRefusals:   {"reason": closed(approval.RefusalReasons())},
		NameToolSearchCalls:    {"outcome": outcomes},
		NameToolListBytes:      {"list": closed([]string{listFull, listSent})},
		NameGuardrailChecks: {"guardrail": closed(guardrails.Guardrails()), "direction": closed(guardrails.Directions()),
			"verdict": closed(GuardrailVerdicts())},
		NameGuardrailFindings: {"detector": closed(guardrails.Detectors()), "direction": closed(guardrails.Directions()),
			"action": closed(guardrails.Actions()), "guardrail": closed(guardrails.Guardrails())},
		NameGuardrailDuration:              {"check": closed([]string{CheckSchema, CheckContent}), "direction": closed(guardrails.Directions())},
		"mcp_gateway_config_reloads_total": {"result": ReloadResults()},
		NameInterceptorCalls:               {"phase": closed(InterceptorPhases()), "result": closed(InterceptorResults())},
		NameInterceptorErrors:              {"reason": closed(intercept.Reasons())},
		NameInterceptorDuration:            {"phase": closed(InterceptorPhases())},
		NameUserOAuthConsents: {"event": closed([]string{useroauth.ConsentStarted, useroauth.ConsentCompleted, useroauth.ConsentFailed}),
			"reason": closed(useroauth.FailureReasons(), []string{ReasonNone})},
		NameUserOAuthRefreshes:   {"result": closed(refreshResults)},
		NameUserOAuthRevocations: {"by": closed(revokers)},
	}
}

// checkValues holds familyValues to the gathered series: every value a series carries is in its
// family's set, and a family whose label shares its name with a label another family has a
// closed set for has one of its own, so that no matcher on it goes unchecked.
func (s schema) checkValues(t *testing.T, mfs []*dto.MetricFamily) {
	t.Helper()
	closedLabels := map[string]bool{}
	for _, labels := range s.values {
		for l := range labels {
			closedLabels[l] = true
		}
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				values, ok := s.values[mf.GetName()][lp.GetName()]
				switch {
				case !ok && closedLabels[lp.GetName()]:
					t.Errorf("%s{%s}: no closed set in familyValues", mf.GetName(), lp.GetName())
				case ok && !slices.Contains(values, lp.GetValue()):
					t.Errorf("%s{%s=%q}: not in its closed set in familyValues", mf.GetName(), lp.GetName(), lp.GetValue())
				}
			}
		}
	}
}

// family maps a series name to its family: histogram series carry suffixes.
func (s schema) family(name string) (string, bool) {
	if _, ok := s.labels[name]; ok {
		return name, true
	}
	base, ok := promcheck.HistogramFamily(name)
	return base, ok && s.histograms[base]
}

// check reports every selector in expr that names an unknown metric, a label
// the metric lacks, or a value outside the label's closed set, and every label
// it groups by that none of its metrics has. It returns the families used.
func (s schema) check(t *testing.T, where, expr string) []string {
	t.Helper()
	var used []string
	q := promcheck.Parse(expr)
	known := append([]string{"le"}, promcheck.TargetLabels()...)
	for _, sel := range q.Selectors {
		fam, ok := s.family(sel.Metric)
		if !ok {
			t.Errorf("%s: %s is not a metric the recorders register", where, sel.Metric)
			continue
		}
		used = append(used, fam)
		allowed := append(slices.Clone(s.labels[fam]), promcheck.TargetLabels()...)
		if strings.HasSuffix(sel.Metric, "_bucket") {
			allowed = append(allowed, "le")
		}
		for _, m := range sel.Matchers {
			s.checkMatcher(t, where, sel.Metric, allowed, m)
		}
		known = append(known, s.labels[fam]...)
	}
	for _, l := range q.Grouping {
		if !slices.Contains(known, l) {
			t.Errorf("%s: groups by %q, which no metric of the query has", where, l)
		}
	}
	return used
}

func (s schema) checkMatcher(t *testing.T, where, metric string, allowed []string, m promcheck.Matcher) {
	t.Helper()
	if !slices.Contains(allowed, m.Label) {
		t.Errorf("%s: %s has no label %q", where, metric, m.Label)
		return
	}
	fam, _ := s.family(metric)
	closed, ok := s.values[fam][m.Label]
	if !ok || strings.Contains(m.Value, "$") {
		return
	}
	if m.Op == "=~" || m.Op == "!~" {
		if !plainAltRE.MatchString(m.Value) {
			return
		}
		for _, v := range strings.Split(m.Value, "|") {
			if !slices.Contains(closed, v) {
				t.Errorf("%s: %s{%s%s%q}: %q is not a %s value", where, metric, m.Label, m.Op, m.Value, v, m.Label)
			}
		}
		return
	}
	if !slices.Contains(closed, m.Value) {
		t.Errorf("%s: %s{%s%s%q}: not a %s value", where, metric, m.Label, m.Op, m.Value, m.Label)
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
