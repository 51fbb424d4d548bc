package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcp-gateway/gateway/internal/tools/loadgen"
)

// summary is the JSON `mcpload summarize` writes.
type summary struct {
	// Baseline is the -baseline flag: the targets ratios are computed against, comma-separated.
	Baseline string          `json:"baseline"`
	Rows     []loadgen.Row   `json:"rows"`
	Hold     []holdResult    `json:"hold,omitempty"`
	Startup  []startupResult `json:"startup,omitempty"`
}

// runSummarize is `mcpload summarize`: read every result file in -dir, print one table with the
// median round per scenario and target and the ratios to -baseline, then the hold and start-up
// figures.
func runSummarize(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("summarize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "directory of mcpload JSON results")
	baseline := fs.String("baseline", "nginx", "targets the ratios are computed against, comma-separated (e.g. nginx,go-proxy)")
	out := fs.String("out", "", "write the summary JSON to this file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	s, err := loadResults(*dir)
	if err != nil {
		return err
	}
	s.Baseline = *baseline
	bases := strings.Split(*baseline, ",")
	s.Rows = loadgen.Compare(s.runs, bases...)
	if err := loadgen.WriteRows(stdout, s.Rows, bases...); err != nil {
		return err
	}
	if err := writeExtras(stdout, &s.summary); err != nil {
		return err
	}
	if *out == "" {
		return nil
	}
	return writeJSON(nil, *out, s.summary)
}

type loaded struct {
	summary
	runs []*loadgen.Report
}

// loadResults reads the JSON files of dir in name order, so rounds keep their order.
func loadResults(dir string) (*loaded, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	l := &loaded{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var kind struct{ Kind string }
		if err := json.Unmarshal(b, &kind); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		switch kind.Kind {
		case "run":
			var r loadgen.Report
			err = json.Unmarshal(b, &r)
			l.runs = append(l.runs, &r)
		case "hold":
			var h holdResult
			err = json.Unmarshal(b, &h)
			l.Hold = append(l.Hold, h)
		case "startup":
			var s startupResult
			err = json.Unmarshal(b, &s)
			l.Startup = append(l.Startup, s)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return l, nil
}

func writeExtras(w io.Writer, s *summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(s.Hold) > 0 {
		fmt.Fprintln(tw, "\nidle streams\tround\topened\tfailed\tRSS before KiB\tRSS after KiB\tKiB/stream\tlive after a GC: before KiB\tafter KiB\tKiB/stream\topen s")
	}
	for _, h := range s.Hold {
		gc := "-\t-\t-"
		if h.LiveAfterKiB > 0 {
			gc = fmt.Sprintf("%d\t%d\t%.1f", h.LiveBeforeKiB, h.LiveAfterKiB, h.LiveKiBPerStream)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%d\t%.1f\t%s\t%.2f\n", h.Scenario, h.Round, h.Opened, failures(h.Failed),
			h.RSSBeforeKiB, h.RSSAfterKiB, h.KiBPerStream, gc, h.OpenSeconds)
	}
	if len(s.Startup) > 0 {
		fmt.Fprintln(tw, "\nstart-up\truns\tready ms (median)\tready ms (all)\tfirst tools/list ms (median)")
	}
	for _, st := range s.Startup {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.2f\n", st.Scenario, st.Runs, st.MedianMs, st.ReadyMs, st.MedianListMs)
	}
	return tw.Flush()
}

// failures prints a hold's failed streams as a count and, when there were any, their kinds.
func failures(byKind map[string]int) string {
	total := 0
	for _, n := range byKind {
		total += n
	}
	if total == 0 {
		return "0"
	}
	kinds := slices.Sorted(maps.Keys(byKind))
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s:%d", k, byKind[k])
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ","))
}
