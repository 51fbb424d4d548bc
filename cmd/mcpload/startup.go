package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/mcp-gateway/gateway/internal/tools/loadgen"
)

// Limits of `mcpload startup`.
const (
	maxStartupRuns = 50
	readyPoll      = 2 * time.Millisecond
)

// startupResult is what `mcpload startup` reports.
type startupResult struct {
	Kind         string    `json:"kind"`
	Scenario     string    `json:"scenario,omitempty"`
	Runs         int       `json:"runs"`
	ReadyMs      []float64 `json:"ready_ms"`
	MedianMs     float64   `json:"median_ready_ms"`
	FirstListMs  []float64 `json:"first_list_ms,omitempty"`
	MedianListMs float64   `json:"median_first_list_ms,omitempty"`
}

// runStartup is `mcpload startup`: exec the command -runs times and time exec → ready 200.
func runStartup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("startup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ready, listURL, out, scenario, logPath string
	var runs int
	var timeout, stopTimeout time.Duration
	fs.StringVar(&ready, "ready", "", "readiness URL that answers 200 when the process is ready (loopback only)")
	fs.StringVar(&listURL, "first-list", "", "MCP endpoint: also time the first tools/list once ready (cold)")
	fs.IntVar(&runs, "runs", 5, "how many times to start the command")
	fs.DurationVar(&timeout, "timeout", 15*time.Second, "give up on one start after this long")
	fs.DurationVar(&stopTimeout, "stop-timeout", 15*time.Second, "SIGKILL when SIGTERM has not stopped it by then")
	fs.StringVar(&logPath, "log", "", "append the command's output to this file (default: discard)")
	fs.StringVar(&out, "out", "", "also write the JSON result to this file")
	fs.StringVar(&scenario, "scenario", "startup", "scenario label")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	argv := fs.Args()
	if len(argv) == 0 || ready == "" || runs < 1 || runs > maxStartupRuns {
		fmt.Fprintf(stderr, "usage: mcpload startup -ready URL [-runs 1..%d] -- command args…\n", maxStartupRuns)
		return errUsage
	}
	for _, u := range []string{ready, listURL} {
		if u == "" {
			continue
		}
		if err := loadgen.CheckLoopback(ctx, &net.Resolver{}, u); err != nil {
			return err
		}
	}
	logw := io.Discard
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		logw = f
	}
	res := startupResult{Kind: "startup", Scenario: scenario, Runs: runs}
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}, Timeout: time.Second}
	for range runs {
		d, list, err := startOnce(ctx, argv, ready, listURL, client, logw, timeout, stopTimeout)
		if err != nil {
			return err
		}
		res.ReadyMs = append(res.ReadyMs, ms(d))
		if listURL != "" {
			res.FirstListMs = append(res.FirstListMs, ms(list))
		}
	}
	res.MedianMs, res.MedianListMs = median(res.ReadyMs), median(res.FirstListMs)
	return writeJSON(stdout, out, res)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	return s[(len(s)-1)/2]
}

// startOnce starts argv, polls ready until 200, optionally times one tools/list, and stops the
// process again, always.
func startOnce(ctx context.Context, argv []string, ready, listURL string, client *http.Client,
	logw io.Writer, timeout, stopTimeout time.Duration) (time.Duration, time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logw, logw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer stopProcess(cmd, stopTimeout)
	if err := pollReady(ctx, client, ready, timeout); err != nil {
		return 0, 0, err
	}
	took := time.Since(start)
	if listURL == "" {
		return took, 0, nil
	}
	r, err := loadgen.New(loadgen.Config{URL: listURL, Requests: 1, Mix: loadgen.Mix{{Op: loadgen.OpList, Weight: 1}}}, nil)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	rep, err := r.Run(ctx)
	if err != nil {
		return 0, 0, err
	}
	if rep.Total.Errors > 0 {
		return 0, 0, fmt.Errorf("first tools/list failed: %v", rep.Total.ErrorsByKind)
	}
	return took, time.Duration(rep.Total.Latency.Max * float64(time.Millisecond)), nil
}

var errNotReady = errors.New("process did not become ready")

func pollReady(ctx context.Context, client *http.Client, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(readyPoll)
	}
	return fmt.Errorf("%w within %s: %s", errNotReady, timeout, url)
}

func stopProcess(cmd *exec.Cmd, grace time.Duration) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}
