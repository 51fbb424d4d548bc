package loadgen

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// Row is one line of a side-by-side comparison: the median round of one target in one
// scenario, with its ratios to the baseline target of the same scenario.
type Row struct {
	Scenario  string  `json:"scenario"`
	Target    string  `json:"target"`
	Rounds    int     `json:"rounds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	P50       float64 `json:"p50_ms"`
	P99       float64 `json:"p99_ms"`
	Errors    uint64  `json:"errors"`
	// ThroughputRatio is OpsPerSec over the first baseline's; P50Ratio and P99Ratio are
	// latencies over the first baseline's. All are 0 when the scenario has no run of it.
	ThroughputRatio float64 `json:"throughput_ratio,omitempty"`
	P50Ratio        float64 `json:"p50_ratio,omitempty"`
	P99Ratio        float64 `json:"p99_ratio,omitempty"`
	// Versus holds the ratios to every baseline that ran in the same scenario, by target name.
	Versus map[string]Ratios `json:"versus,omitempty"`
	// CPU is the median round's CPU microseconds per request by process group (Report.CPU).
	CPU map[string]float64 `json:"cpu_us_per_request,omitempty"`
}

// Ratios compares a row with one baseline of its scenario: throughput over the baseline's, and
// latencies over the baseline's.
type Ratios struct {
	Throughput float64 `json:"throughput"`
	P50        float64 `json:"p50"`
	P99        float64 `json:"p99"`
}

// MedianRound returns the report with the median throughput (the lower middle for an even
// count), so all its figures come from one real round rather than being mixed across rounds.
func MedianRound(rounds []*Report) *Report {
	if len(rounds) == 0 {
		return nil
	}
	s := slices.Clone(rounds)
	slices.SortStableFunc(s, func(a, b *Report) int { return cmp.Compare(a.Total.OpsPerSec, b.Total.OpsPerSec) })
	return s[(len(s)-1)/2]
}

// Compare groups reports by scenario and target, keeps each group's median round, and computes
// ratios to each target named in baselines that ran in the same scenario (the first one also
// fills ThroughputRatio, P50Ratio and P99Ratio). Rows keep the order in which each scenario and
// target first appears in reports.
func Compare(reports []*Report, baselines ...string) []Row {
	type key struct{ scenario, target string }
	groups := map[key][]*Report{}
	var order []key
	for _, r := range reports {
		k := key{r.Scenario, r.Target}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	rows := make([]Row, 0, len(order))
	for _, k := range order {
		m := MedianRound(groups[k])
		rows = append(rows, Row{Scenario: k.scenario, Target: k.target, Rounds: len(groups[k]),
			OpsPerSec: m.Total.OpsPerSec, P50: m.Total.Latency.P50, P99: m.Total.Latency.P99, Errors: m.Total.Errors,
			CPU: m.CPU})
	}
	for i := range rows {
		for j, baseline := range baselines {
			b := groups[key{rows[i].Scenario, baseline}]
			if len(b) == 0 {
				continue
			}
			base := MedianRound(b)
			r := Ratios{
				Throughput: ratio(rows[i].OpsPerSec, base.Total.OpsPerSec),
				P50:        ratio(rows[i].P50, base.Total.Latency.P50),
				P99:        ratio(rows[i].P99, base.Total.Latency.P99),
			}
			if rows[i].Versus == nil {
				rows[i].Versus = map[string]Ratios{}
			}
			rows[i].Versus[baseline] = r
			if j == 0 {
				rows[i].ThroughputRatio, rows[i].P50Ratio, rows[i].P99Ratio = r.Throughput, r.P50, r.P99
			}
		}
	}
	return rows
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// WriteRows writes rows as an aligned text table; ratios print as "-" when absent. Each baseline
// that any row was compared with gets three columns (throughput, p50 and p99 ratios), in the order
// given; each CPU group that any row measured gets a column of microseconds per request.
func WriteRows(w io.Writer, rows []Row, baselines ...string) error {
	var bases []string
	for _, b := range baselines {
		for _, r := range rows {
			if _, ok := r.Versus[b]; ok {
				bases = append(bases, b)
				break
			}
		}
	}
	var groups []string
	for _, r := range rows {
		for g := range r.CPU {
			if !slices.Contains(groups, g) {
				groups = append(groups, g)
			}
		}
	}
	slices.Sort(groups)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "scenario\ttarget\trounds\treq/s\tp50 ms\tp99 ms\terrors")
	for _, b := range bases {
		fmt.Fprintf(tw, "\tx%s req/s\tp50\tp99", b)
	}
	for _, g := range groups {
		fmt.Fprintf(tw, "\t%s µs/req", g)
	}
	fmt.Fprintln(tw)
	r3 := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", v)
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.3f\t%.3f\t%d", r.Scenario, r.Target, r.Rounds,
			r.OpsPerSec, r.P50, r.P99, r.Errors)
		for _, b := range bases {
			v := r.Versus[b]
			fmt.Fprintf(tw, "\t%s\t%s\t%s", r3(v.Throughput), r3(v.P50), r3(v.P99))
		}
		for _, g := range groups {
			if v, ok := r.CPU[g]; ok {
				fmt.Fprintf(tw, "\t%.0f", v)
			} else {
				fmt.Fprint(tw, "\t-")
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
