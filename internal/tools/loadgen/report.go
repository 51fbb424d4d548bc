package loadgen

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"
)

// opStats are one operation's figures within one worker.
type opStats struct {
	hist   Histogram
	errors map[string]uint64
	reqs   uint64
}

// stats are one worker's figures per operation.
type stats struct {
	ops map[Op]*opStats
}

func newStats() *stats { return &stats{ops: map[Op]*opStats{}} }

func (s *stats) op(op Op) *opStats {
	o := s.ops[op]
	if o == nil {
		o = &opStats{errors: map[string]uint64{}}
		s.ops[op] = o
	}
	return o
}

// record adds one finished operation. Failed operations count in the latency histogram too:
// leaving them out would make a target that fails fast look quick.
func (s *stats) record(op Op, d time.Duration, reqs int, err error) {
	o := s.op(op)
	o.hist.Record(d)
	o.reqs += uint64(reqs)
	if err != nil {
		o.errors[kindOf(err)]++
	}
}

func (s *stats) merge(other *stats) {
	for op, src := range other.ops {
		dst := s.op(op)
		dst.hist.Merge(&src.hist)
		dst.reqs += src.reqs
		for k, n := range src.errors {
			dst.errors[k] += n
		}
	}
}

// Latency holds latency figures in milliseconds.
type Latency struct {
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
	P99  float64 `json:"p99_ms"`
	Max  float64 `json:"max_ms"`
	Mean float64 `json:"mean_ms"`
}

// OpReport is one operation's share of a run.
type OpReport struct {
	// Operations is how many operations finished, successful or not.
	Operations uint64 `json:"operations"`
	// HTTPRequests is how many HTTP requests they took (a confirm takes two).
	HTTPRequests uint64 `json:"http_requests"`
	// Errors is how many operations failed; ErrorsByKind breaks them down.
	Errors       uint64            `json:"errors"`
	ErrorsByKind map[string]uint64 `json:"errors_by_kind,omitempty"`
	// OpsPerSec is Operations divided by the measured time.
	OpsPerSec float64 `json:"ops_per_sec"`
	Latency   Latency `json:"latency"`
}

// Report is the result of one measured phase; it marshals to the JSON that mcpload -json prints.
type Report struct {
	// Kind is "run", so a directory of mixed result files can be told apart.
	Kind string `json:"kind"`
	// Scenario, Target and Round label a run within a comparison; the caller sets them.
	Scenario    string  `json:"scenario,omitempty"`
	Target      string  `json:"target,omitempty"`
	Round       int     `json:"round,omitempty"`
	URL         string  `json:"url"`
	Mix         string  `json:"mix"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	// Total sums every operation; Ops splits it by operation.
	Total OpReport             `json:"total"`
	Ops   map[string]*OpReport `json:"ops"`
	// CPU is each Config.CPU group's CPU time in microseconds per HTTP request of the measured
	// phase.
	CPU map[string]float64 `json:"cpu_us_per_request,omitempty"`
}

func newReport(cfg *Config, s *stats, elapsed time.Duration) *Report {
	r := &Report{Kind: "run", URL: cfg.URL, Mix: cfg.Mix.String(), Concurrency: cfg.Concurrency,
		Seconds: elapsed.Seconds(), Ops: map[string]*OpReport{}}
	var all opStats
	all.errors = map[string]uint64{}
	for op, o := range s.ops {
		r.Ops[string(op)] = opReport(o, elapsed)
		all.hist.Merge(&o.hist)
		all.reqs += o.reqs
		for k, n := range o.errors {
			all.errors[k] += n
		}
	}
	r.Total = *opReport(&all, elapsed)
	return r
}

func opReport(o *opStats, elapsed time.Duration) *OpReport {
	rep := &OpReport{Operations: o.hist.Count(), HTTPRequests: o.reqs, Latency: latencyOf(&o.hist)}
	for k, n := range o.errors {
		rep.Errors += n
		if rep.ErrorsByKind == nil {
			rep.ErrorsByKind = map[string]uint64{}
		}
		rep.ErrorsByKind[k] = n
	}
	if s := elapsed.Seconds(); s > 0 {
		rep.OpsPerSec = float64(rep.Operations) / s
	}
	return rep
}

func latencyOf(h *Histogram) Latency {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return Latency{P50: ms(h.Quantile(0.50)), P90: ms(h.Quantile(0.90)), P99: ms(h.Quantile(0.99)),
		Max: ms(h.Max()), Mean: ms(h.Mean())}
}

// WriteText writes r as an aligned table: one row per operation and a total row, then the
// errors by kind.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "target %s  mix %s  c=%d  %.2fs\n", r.URL, r.Mix, r.Concurrency, r.Seconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tops\treq/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\terrors\t")
	row := func(name string, o *OpReport) {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t\n", name, o.Operations, o.OpsPerSec,
			o.Latency.P50, o.Latency.P90, o.Latency.P99, o.Latency.Max, o.Errors)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Ops)) {
		row(name, r.Ops[name])
	}
	row("total", &r.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(r.Total.ErrorsByKind)) {
		fmt.Fprintf(w, "  error %s: %d\n", k, r.Total.ErrorsByKind[k])
	}
	for _, k := range slices.Sorted(maps.Keys(r.CPU)) {
		fmt.Fprintf(w, "  cpu %s: %.1f µs per request\n", k, r.CPU[k])
	}
	return nil
}
