// Package promcheck reads what the Helm chart ships for Prometheus and Grafana (the alert rules,
// the dashboard, the promtool unit tests of the rules) and a real /metrics scrape of the gateway,
// so that tests can hold the shipped files to what the gateway exports: every metric, label and
// input series they name must exist in a scrape of a gateway that served traffic.
//
// It understands just enough PromQL to find the selectors and the grouping labels of a query,
// which is what a renamed metric or label breaks. It also finds promtool, which runs the rules'
// unit tests (see [Promtool]).
package promcheck

import (
	"regexp"
	"slices"
	"strings"
)

// Prefix is the prefix of every gateway metric.
const Prefix = "mcp_gateway_"

// TargetLabels are the labels Prometheus or the scrape configuration add to every series of a
// target; a query may use them on any gateway metric.
func TargetLabels() []string {
	return []string{"job", "instance", "namespace", "pod", "service", "container", "endpoint"}
}

// Matcher is one label matcher of a selector: Label Op "Value".
type Matcher struct {
	Label, Op, Value string
}

// Selector is one vector selector of a gateway metric in a query.
type Selector struct {
	// Metric is the name as written, histogram suffixes (_bucket, _sum, _count) included.
	Metric   string
	Matchers []Matcher
}

// Query is what one PromQL expression uses: its gateway selectors and the labels it groups or
// matches on (by, without, on, ignoring, group_left, group_right).
type Query struct {
	Selectors []Selector
	Grouping  []string
}

var (
	selectorRE = regexp.MustCompile(`\b(` + Prefix + `[a-z0-9_]+)\s*(\{[^}]*\})?`)
	matcherRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"`)
	groupingRE = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	templateRE = regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`)
)

// Parse returns the gateway selectors and grouping labels of a PromQL expression.
func Parse(expr string) Query {
	var q Query
	for _, m := range selectorRE.FindAllStringSubmatch(expr, -1) {
		s := Selector{Metric: m[1]}
		for _, mm := range matcherRE.FindAllStringSubmatch(m[2], -1) {
			s.Matchers = append(s.Matchers, Matcher{Label: mm[1], Op: mm[2], Value: mm[3]})
		}
		q.Selectors = append(q.Selectors, s)
	}
	for _, m := range groupingRE.FindAllStringSubmatch(expr, -1) {
		for l := range strings.SplitSeq(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !slices.Contains(q.Grouping, l) {
				q.Grouping = append(q.Grouping, l)
			}
		}
	}
	return q
}

// TemplateLabels returns the labels an alert annotation reads ({{ $labels.x }}).
func TemplateLabels(text string) []string {
	var out []string
	for _, m := range templateRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// HistogramFamily returns the family a histogram series name belongs to and true, or name and
// false when it carries no histogram suffix.
func HistogramFamily(name string) (string, bool) {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			return base, true
		}
	}
	return name, false
}
