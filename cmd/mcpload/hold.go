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

	"github.com/mcp-gateway/gateway/internal/loadgen"
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
	// With -gc-url: the same readings each taken right after a forced garbage collection, so
	// they count what the streams hold and not the garbage their opening left behind.
	RSSBeforeGCKiB      int64   `json:"rss_before_gc_kib,omitempty"`
	RSSAfterGCKiB       int64   `json:"rss_after_gc_kib,omitempty"`
	KiBPerStreamAfterGC float64 `json:"kib_per_stream_after_gc,omitempty"`
	MeasuredPID  int            `json:"pid,omitempty"`
}

// runHold is `mcpload hold`: open idle listen streams, measure a process's RSS before and after.
func runHold(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hold", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg loadgen.HoldConfig
	var pid, round int
	var settle, hold time.Duration
	var out, scenario, tokenFile, gcURL string
	fs.StringVar(&cfg.URL, "url", "", "MCP endpoint (loopback only)")
	fs.IntVar(&cfg.Streams, "n", loadgen.DefaultHoldStreams, "streams to open")
	fs.IntVar(&cfg.Parallel, "parallel", loadgen.DefaultHoldParallel, "streams being opened at once")
	fs.DurationVar(&cfg.Timeout, "timeout", loadgen.DefaultHoldTimeout, "timeout to open one stream")
	fs.StringVar(&tokenFile, "token-file", "", "file holding a bearer token")
	fs.IntVar(&pid, "pid", 0, "process whose VmRSS to read from /proc/PID/status before and after")
	fs.DurationVar(&settle, "settle", time.Second, "wait this long before each RSS reading")
	fs.DurationVar(&hold, "hold", time.Second, "keep the streams open this long after the reading")
	fs.StringVar(&gcURL, "gc-url", "", "also read RSS after a GET of this loopback URL, which makes the process collect garbage (the gateway's /debug/pprof/heap?gc=1)")
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
		if gcURL != "" {
			if res.RSSBeforeGCKiB, err = rssAfterGC(ctx, gcURL, pid, settle); err != nil {
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
		if gcURL != "" {
			if res.RSSAfterGCKiB, err = rssAfterGC(ctx, gcURL, pid, settle); err != nil {
				return err
			}
			if res.Opened > 0 {
				res.KiBPerStreamAfterGC = float64(res.RSSAfterGCKiB-res.RSSBeforeGCKiB) / float64(res.Opened)
			}
		}
	}
	sleep(ctx, hold)
	res.EndedEarly = s.Ended()
	return writeJSON(stdout, out, res)
}

// rssAfterGC asks the process at gcURL to collect garbage, waits settle and reads pid's RSS.
func rssAfterGC(ctx context.Context, gcURL string, pid int, settle time.Duration) (int64, error) {
	if err := loadgen.CheckLoopback(ctx, &net.Resolver{}, gcURL); err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, gcURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("gc-url: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("gc-url: status %d", resp.StatusCode)
	}
	sleep(ctx, settle)
	return readRSS(pid)
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
