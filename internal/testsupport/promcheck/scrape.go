package promcheck

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one /metrics response, parsed.
type Scrape struct {
	families map[string]*dto.MetricFamily
}

// ParseScrape parses the Prometheus text exposition format.
func ParseScrape(r io.Reader) (Scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Scrape{}, err
	}
	return Scrape{families: fams}, nil
}

// Families returns the family names, sorted.
func (s Scrape) Families() []string {
	return slices.Sorted(maps.Keys(s.families))
}

// family returns the family of a series name as a query writes it (a histogram's _bucket, _sum
// or _count series included) and the labels the series may carry beyond the family's (le).
func (s Scrape) family(name string) (*dto.MetricFamily, []string) {
	if f, ok := s.families[name]; ok {
		return f, nil
	}
	base, ok := HistogramFamily(name)
	f := s.families[base]
	if !ok || f == nil || f.GetType() != dto.MetricType_HISTOGRAM {
		return nil, nil
	}
	if strings.HasSuffix(name, "_bucket") {
		return f, []string{"le"}
	}
	return f, []string{}
}

// Type returns the type of a family ("counter", "gauge", "histogram", ...), "" when absent.
func (s Scrape) Type(name string) string {
	f, ok := s.families[name]
	if !ok {
		return ""
	}
	return strings.ToLower(f.GetType().String())
}

// Has reports whether the scrape holds the metric (a family, or a histogram series name).
func (s Scrape) Has(name string) bool {
	f, _ := s.family(name)
	return f != nil
}

// LabelNames returns every label name the series of a metric carry, le included for a
// histogram's _bucket series.
func (s Scrape) LabelNames(name string) []string {
	f, extra := s.family(name)
	if f == nil {
		return nil
	}
	var out []string
	for _, m := range f.GetMetric() {
		for _, lp := range m.GetLabel() {
			if !slices.Contains(out, lp.GetName()) {
				out = append(out, lp.GetName())
			}
		}
	}
	return append(out, extra...)
}

// HasSeries reports whether the scrape holds exactly this series: a metric name as a query or
// a promtool input writes it and all its labels (for a _bucket series, le as the exposition
// formats it), the values of BuildLabels aside.
func (s Scrape) HasSeries(name string, labels map[string]string) bool {
	f, extra := s.family(name)
	if f == nil {
		return false
	}
	for _, m := range f.GetMetric() {
		if !sameLabels(m.GetLabel(), labels, extra) {
			continue
		}
		le, wantBucket := labels["le"]
		if !wantBucket || !slices.Contains(extra, "le") {
			return true
		}
		for _, b := range m.GetHistogram().GetBucket() {
			if formatFloat(b.GetUpperBound()) == le {
				return true
			}
		}
		return le == "+Inf"
	}
	return false
}

func sameLabels(got []*dto.LabelPair, want map[string]string, extra []string) bool {
	n := 0
	for k := range want {
		if !slices.Contains(extra, k) {
			n++
		}
	}
	if len(got) != n {
		return false
	}
	for _, lp := range got {
		v, ok := want[lp.GetName()]
		if !ok || (v != lp.GetValue() && !slices.Contains(BuildLabels(), lp.GetName())) {
			return false
		}
	}
	return true
}

// BuildLabels are the labels whose values depend on the build that was scraped (the gateway's
// version, the Go release); a series matches whatever values it gives them.
func BuildLabels() []string { return []string{"version", "goversion"} }

// formatFloat writes a bucket bound as the text exposition does.
func formatFloat(f float64) string {
	return model.SampleValue(f).String()
}

// EmptyLabelValues lists every series of a family with the prefix that carries a label with an
// empty value, as family{label}.
func (s Scrape) EmptyLabelValues(prefix string) []string {
	var out []string
	for name, f := range s.families {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetValue() == "" {
					out = append(out, name+"{"+lp.GetName()+"}")
				}
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// CheckQuery reports what a query of a shipped file uses that the scrape lacks: a gateway
// metric, a label one of its selectors matches on, a label it groups by, or a label an alert's
// annotation reads, none of which any metric of the query (or the target) carries.
func (s Scrape) CheckQuery(e Expr) []error {
	q := Parse(e.Query)
	var errs []error
	known := TargetLabels()
	for _, sel := range q.Selectors {
		if !s.Has(sel.Metric) {
			errs = append(errs, fmt.Errorf("%s: %s is not in the scrape", e.Where, sel.Metric))
			continue
		}
		names := s.LabelNames(sel.Metric)
		known = append(known, names...)
		for _, m := range sel.Matchers {
			if !slices.Contains(names, m.Label) && !slices.Contains(TargetLabels(), m.Label) {
				errs = append(errs, fmt.Errorf("%s: %s has no label %q in the scrape", e.Where, sel.Metric, m.Label))
			}
		}
	}
	for _, l := range append(slices.Clone(q.Grouping), e.Templated...) {
		if !slices.Contains(known, l) {
			errs = append(errs, fmt.Errorf("%s: label %q is on no metric of the query in the scrape", e.Where, l))
		}
	}
	return errs
}

// CheckInputSeries reports every input series of a promtool test that is not, apart from the
// target labels, exactly a series of the scrape. Series of metrics that are not the gateway's
// (up, from Prometheus itself) are skipped.
func (s Scrape) CheckInputSeries(f RuleTests) []error {
	var errs []error
	for _, tg := range f.Tests {
		for _, in := range tg.InputSeries {
			name, labels, err := ParseSeries(in.Series)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !strings.HasPrefix(name, Prefix) {
				continue
			}
			for _, l := range TargetLabels() {
				delete(labels, l)
			}
			if !s.HasSeries(name, labels) {
				errs = append(errs, fmt.Errorf("test %q: input series %s is not a series of the scrape", tg.Name, in.Series))
			}
		}
	}
	return errs
}
