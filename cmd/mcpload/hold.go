package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/tools/loadgen"
)

// holdResult is what `mcpload hold` reports.
type holdResult struct {
	Kind         string         `json:"kind"`
	Scenario     string         `json:"scenario,omitempty"`
	Round        int            `json:"round,omitempty"`
	Streams      int            `json:"streams"`
	Opened       int            `json:"opened"`
	Failed       map[string]int `json:"failed,omitempty"`
	EndedEarly   int            `json:"ended_early"`
	OpenSeconds  float64        `json:"open_seconds"`
	RSSBeforeKiB int64          `json:"rss_before_kib,omitempty"`
	RSSAfterKiB  int64          `json:"rss_after_kib,omitempty"`
	KiBPerStream float64        `json:"kib_per_stream,omitempty"`
	// With -gc-url and -metrics-url: the Go runtime's heap in use plus goroutine stacks, read
	// right after a forced garbage collection before and after opening. RSS counts the garbage
	// opening the streams left and the freed pages the runtime has not yet returned to the
	// system; this counts what the streams hold.
	LiveBeforeKiB    int64   `json:"live_before_kib,omitempty"`
	LiveAfterKiB     int64   `json:"live_after_kib,omitempty"`
	LiveKiBPerStream float64 `json:"live_kib_per_stream,omitempty"`
	MeasuredPID      int     `json:"pid,omitempty"`
}

// runHold is `mcpload hold`: open idle listen streams, measure a process's RSS before and after.
func runHold(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hold", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg loadgen.HoldConfig
	var pid, round int
	var settle, hold time.Duration
	var out, scenario, tokenFile, gcURL, metricsURL string
	fs.StringVar(&cfg.URL, "url", "", "MCP endpoint (loopback only)")
	fs.IntVar(&cfg.Streams, "n", loadgen.DefaultHoldStreams, "streams to open")
	fs.IntVar(&cfg.Parallel, "parallel", loadgen.DefaultHoldParallel, "streams being opened at once")
	fs.DurationVar(&cfg.Timeout, "timeout", loadgen.DefaultHoldTimeout, "timeout to open one stream")
	fs.StringVar(&tokenFile, "token-file", "", "file holding a bearer token")
	fs.IntVar(&pid, "pid", 0, "process whose VmRSS to read from /proc/PID/status before and after")
	fs.DurationVar(&settle, "settle", time.Second, "wait this long before each RSS reading")
	fs.DurationVar(&hold, "hold", time.Second, "keep the streams open this long after the reading")
	fs.StringVar(&gcURL, "gc-url", "", "with -metrics-url: a loopback URL whose GET makes the process collect garbage (the gateway's /debug/pprof/heap?gc=1)")
	fs.StringVar(&metricsURL, "metrics-url", "", "with -gc-url: the process's Prometheus metrics, whose go_memstats_heap_inuse_bytes and go_memstats_stack_inuse_bytes are read after each collection")
	fs.StringVar(&out, "out", "", "also write the JSON result to this file")
	fs.StringVar(&scenario, "scenario", "idle-sse", "scenario label")
	fs.IntVar(&round, "round", 0, "round number")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return fmt.Errorf("token file: %w", err)
		}
		cfg.Token = strings.TrimSpace(string(b))
	}
	res := holdResult{Kind: "hold", Scenario: scenario, Round: round, Streams: cfg.Streams, MeasuredPID: pid}
	if pid > 0 {
		sleep(ctx, settle)
		before, err := readRSS(pid)
		if err != nil {
			return err
		}
		res.RSSBeforeKiB = before
		if gcURL != "" && metricsURL != "" {
			if res.LiveBeforeKiB, err = liveAfterGC(ctx, gcURL, metricsURL); err != nil {
				return err
			}
		}
	}
	s, err := loadgen.OpenStreams(ctx, cfg, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	res.Opened, res.Failed, res.OpenSeconds = s.Opened, s.Failed, s.OpenTime.Seconds()
	if pid > 0 {
		sleep(ctx, settle)
		after, err := readRSS(pid)
		if err != nil {
			return err
		}
		res.RSSAfterKiB = after
		if res.Opened > 0 {
			res.KiBPerStream = float64(after-res.RSSBeforeKiB) / float64(res.Opened)
		}
		if gcURL != "" && metricsURL != "" {
			if res.LiveAfterKiB, err = liveAfterGC(ctx, gcURL, metricsURL); err != nil {
				return err
			}
			if res.Opened > 0 {
				res.LiveKiBPerStream = float64(res.LiveAfterKiB-res.LiveBeforeKiB) / float64(res.Opened)
			}
		}
	}
	sleep(ctx, hold)
	res.EndedEarly = s.Ended()
	return writeJSON(stdout, out, res)
}

// liveAfterGC asks the process at gcURL to collect garbage, then returns its heap in use plus
// its goroutine stacks from its metrics, in KiB.
func liveAfterGC(ctx context.Context, gcURL, metricsURL string) (int64, error) {
	if _, err := getLoopback(ctx, gcURL); err != nil {
		return 0, fmt.Errorf("gc-url: %w", err)
	}
	body, err := getLoopback(ctx, metricsURL)
	if err != nil {
		return 0, fmt.Errorf("metrics-url: %w", err)
	}
	var total float64
	for _, name := range []string{"go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes"} {
		v, ok := gauge(body, name)
		if !ok {
			return 0, fmt.Errorf("metrics-url: no %s", name)
		}
		total += v
	}
	return int64(total / 1024), nil
}

// getLoopback GETs a loopback URL and returns its body; a status other than 200 is an error.
func getLoopback(ctx context.Context, u string) ([]byte, error) {
	if err := loadgen.CheckLoopback(ctx, &net.Resolver{}, u); err != nil {
		return nil, err
	}
	// Bounded: a process that stops answering ends the run with an error, not a hang.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return body, err
}

// gauge returns the value of an unlabelled metric in Prometheus text exposition.
func gauge(text []byte, name string) (float64, bool) {
	for _, line := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// readRSS returns VmRSS of pid in KiB.
func readRSS(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
