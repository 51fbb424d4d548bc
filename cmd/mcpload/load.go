package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcp-gateway/gateway/internal/tools/loadgen"
)

// runLoad is `mcpload run`.
func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	rf, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	r, err := loadgen.New(rf.cfg, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	rep, err := r.Run(ctx)
	if err != nil {
		return err
	}
	rep.Scenario, rep.Target, rep.Round = rf.scenario, rf.target, rf.round
	if rf.asJSON {
		return writeJSON(stdout, rf.out, rep)
	}
	if err := writeJSON(nil, rf.out, rep); err != nil {
		return err
	}
	return rep.WriteText(stdout)
}

// runFlags are `mcpload run`'s flags: the load configuration and how to report.
type runFlags struct {
	cfg                   loadgen.Config
	out, scenario, target string
	asJSON                bool
	round                 int
}

func parseRunFlags(args []string, stderr io.Writer) (*runFlags, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rf := &runFlags{}
	cfg := &rf.cfg
	var mix, toolArgs, sseArgs, confirmArgs, content, tokenFile string
	fs.StringVar(&cfg.URL, "url", "", "MCP endpoint (loopback only)")
	fs.IntVar(&cfg.Concurrency, "c", loadgen.DefaultConcurrency, "concurrent closed-loop workers")
	fs.Int64Var(&cfg.Requests, "n", 0, "stop after this many operations (0: no count bound)")
	fs.DurationVar(&cfg.Duration, "duration", 0, "stop after this long (default 10s when -n is 0)")
	fs.DurationVar(&cfg.Warmup, "warmup", 0, "run this long first and discard the figures")
	fs.DurationVar(&cfg.Timeout, "timeout", loadgen.DefaultTimeout, "per-request timeout")
	fs.StringVar(&mix, "mix", "call", "operations and weights: call, list, confirm, sse, legacy-call (a 2025-11-25 client with a session), e.g. call:8,list:1")
	fs.StringVar(&cfg.Tool, "tool", loadgen.DefaultTool, "tool of the call operation")
	fs.StringVar(&toolArgs, "args", loadgen.DefaultArgs, "arguments (JSON object) of the call operation")
	fs.StringVar(&cfg.SSETool, "sse-tool", loadgen.DefaultSSETool, "tool of the sse operation (must stream progress)")
	fs.StringVar(&sseArgs, "sse-args", loadgen.DefaultSSEArgs, "arguments of the sse operation")
	fs.StringVar(&cfg.ConfirmTool, "confirm-tool", loadgen.DefaultConfirmTool, "tool of the confirm operation")
	fs.StringVar(&confirmArgs, "confirm-args", loadgen.DefaultConfirmArgs, "arguments of the confirm operation")
	fs.StringVar(&content, "confirm-content", loadgen.DefaultConfirmContent, "content accepted for every input request")
	fs.StringVar(&cfg.Token, "token", "", "bearer token (prefer -token-file; never printed)")
	fs.StringVar(&tokenFile, "token-file", "", "file holding the bearer token")
	fs.Func("cpu", "name=pid[,pid...]: report these processes' CPU µs per request (repeatable)", func(v string) error {
		g, err := loadgen.ParseCPUGroup(v)
		cfg.CPU = append(cfg.CPU, g)
		return err
	})
	fs.BoolVar(&rf.asJSON, "json", false, "print the report as JSON")
	fs.StringVar(&rf.out, "out", "", "also write the JSON report to this file")
	fs.StringVar(&rf.scenario, "scenario", "", "scenario label for summarize")
	fs.StringVar(&rf.target, "target", "", "target label for summarize")
	fs.IntVar(&rf.round, "round", 0, "round number for summarize")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	m, err := loadgen.ParseMix(mix)
	if err != nil {
		return nil, err
	}
	cfg.Mix = m
	cfg.Args, cfg.SSEArgs = json.RawMessage(toolArgs), json.RawMessage(sseArgs)
	cfg.ConfirmArgs, cfg.ConfirmContent = json.RawMessage(confirmArgs), json.RawMessage(content)
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("token file: %w", err)
		}
		cfg.Token = strings.TrimSpace(string(b))
	}
	return rf, nil
}
