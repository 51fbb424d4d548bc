// Command mcpload is the gateway's load harness: it drives an MCP 2026-07-28 endpoint on
// loopback with a closed-loop mix of operations, serves a minimal fast backend to measure
// against, a bare Go reverse proxy to compare hops with and an Interceptor Server that allows
// every call, holds idle listen streams, times process start-up and summarises a comparison.
//
//	mcpload run       -url http://127.0.0.1:8080/mcp -c 16 -duration 10s -mix call:8,list:1,confirm:1 [-json]
//	mcpload backend   -listen 127.0.0.1:0 -tools 100 [-count 20] [-addr-file F]
//	mcpload hold      -url … -n 2000 -pid PID [-json]
//	mcpload startup   -ready http://127.0.0.1:9090/readyz -runs 5 -- gateway serve …
//	mcpload summarize -dir .cache/bench/raw -baseline nginx
//	mcpload ports     -n 3
//	mcpload issuer    -audience http://127.0.0.1:8080/mcp -token-file F
//	mcpload proxy     -upstream http://127.0.0.1:PORT/mcp [-addr-file F]
//	mcpload interceptor [-listen 127.0.0.1:0] [-addr-file F]
//
// Every address it listens on or sends to must be loopback.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// errUsage marks a command-line mistake: the message has been printed, exit status 2.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "mcpload:", err)
		os.Exit(1)
	}
}

// run dispatches to a sub-command; "run" is the default when the first argument is a flag.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "run"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		return runLoad(ctx, args, stdout, stderr)
	case "backend":
		return runBackend(ctx, args, stdout, stderr)
	case "hold":
		return runHold(ctx, args, stdout, stderr)
	case "startup":
		return runStartup(ctx, args, stdout, stderr)
	case "summarize":
		return runSummarize(args, stdout, stderr)
	case "ports":
		return runPorts(args, stdout, stderr)
	case "issuer":
		return runIssuer(ctx, args, stdout, stderr)
	case "proxy":
		return runProxy(ctx, args, stdout, stderr)
	case "interceptor":
		return runInterceptor(ctx, args, stdout, stderr)
	}
	fmt.Fprintf(stderr, "mcpload: unknown command %q (run, backend, hold, startup, summarize, ports, issuer, proxy, interceptor)\n", cmd)
	return errUsage
}

// writeJSON writes v indented to w and, when path is set, to that file too.
func writeJSON(w io.Writer, path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path != "" {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	if w == nil {
		return nil
	}
	_, err = w.Write(b)
	return err
}

// parseFlags parses args and maps flag errors to errUsage.
func parseFlags(fs interface{ Parse([]string) error }, args []string) error {
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	return nil
}
