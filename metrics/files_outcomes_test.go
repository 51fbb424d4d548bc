package metrics

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/internal/testsupport/promcheck"
)

// failure says, for every outcome, whether an error ratio counts it: the gateway failed, or a
// backend gave no usable answer. A new outcome must be classified here before the files below
// can be checked against it.
var failure = map[string]bool{
	outcome.OK:            false,
	outcome.InputRequired: false,
	outcome.ClientError:   false,
	outcome.Denied:        false,
	outcome.RateLimited:   false,
	outcome.Canceled:      false,
	outcome.BackendError:  false, // the backend's own answer, relayed
	outcome.BadResponse:   true,
	outcome.Timeout:       true,
	outcome.Unavailable:   true,
	outcome.GatewayError:  true,
}

// TestOutcomesClassified: the table above covers exactly the recorder's outcome set.
func TestOutcomesClassified(t *testing.T) {
	var keys []string
	for o := range failure {
		keys = append(keys, o)
	}
	got, want := slices.Sorted(slices.Values(keys)), slices.Sorted(slices.Values(Outcomes()))
	if !slices.Equal(got, want) {
		t.Errorf("classified outcomes %v, recorder outcomes %v", got, want)
	}
}

// TestShippedErrorRatios: every outcome selection in the shipped alert rules and dashboard
// picks exactly the failures, so an error ratio neither misses a failure nor pages on a
// backend's own JSON-RPC error or a client's mistake.
func TestShippedErrorRatios(t *testing.T) {
	var want []string
	for o, f := range failure {
		if f {
			want = append(want, o)
		}
	}
	slices.Sort(want)
	exprs := map[string]string{}
	for _, g := range loadRules(t).Groups {
		for _, r := range g.Rules {
			exprs["alert "+r.Alert] = r.Expr
		}
	}
	for _, p := range flatten(loadDashboard(t).Panels) {
		for _, tg := range p.Targets {
			exprs["panel "+p.Title+" "+tg.RefID] = tg.Expr
		}
	}
	found := 0
	for where, expr := range exprs {
		for _, sel := range promcheck.Parse(expr).Selectors {
			for _, m := range sel.Matchers {
				if m.Label != "outcome" {
					continue
				}
				found++
				if m.Op != "=~" {
					t.Errorf("%s: outcome%s%q: select outcomes with =~ and the failure set", where, m.Op, m.Value)
					continue
				}
				if got := slices.Sorted(slices.Values(strings.Split(m.Value, "|"))); !slices.Equal(got, want) {
					t.Errorf("%s: %s selects outcomes %v, want the failures %v", where, sel.Metric, got, want)
				}
			}
		}
	}
	if found == 0 {
		t.Error("no outcome selection found in the shipped files; the error-ratio alert is missing")
	}
}
