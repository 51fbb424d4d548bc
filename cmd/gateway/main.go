// Command gateway is the MCP gateway: a stateless Streamable HTTP edge server speaking MCP
// 2026-07-28 (and serving 2025-11-25, 2025-06-18 and 2025-03-26 clients) that authenticates callers, applies
// per-tool policy and forwards to backend MCP servers presented as one namespaced server.
//
// Everything it does is in internal/gateway; this file is the process around it. The local demo
// is a command of its own (cmd/gateway-demo), so this binary links no demo, development issuer
// or SDK.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcp-gateway/gateway/internal/gateway"
)

// version is stamped at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := gateway.Main(ctx, version, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
