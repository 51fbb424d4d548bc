package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/template"

	"github.com/mcp-gateway/gateway/internal/demo"
)

// runDemo starts the demo backends and the gateway in front of them, all on loopback, and prints
// what to try. It runs until interrupted.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "MCP listener `address` (loopback only)")
	admin := fs.String("admin-listen", "127.0.0.1:9090", "admin listener `address` (loopback only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !isLoopbackAddr(*listen) || !isLoopbackAddr(*admin) {
		return fmt.Errorf("the demo listens on loopback addresses only")
	}
	backends, err := demo.Start(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer backends.Close()

	cfg := &Config{Log: LogConfig{Level: "warn", Format: "text"}}
	cfg.Server.Listen, cfg.Admin.Listen = *listen, *admin
	cfg.Auth.Disabled = true
	for _, b := range backends.List() {
		cfg.Upstreams = append(cfg.Upstreams, UpstreamConfig{Name: b.Name, URL: b.URL})
	}
	cfg.applyDefaults()
	cfg.Server.DrainDelay = 0
	if err := cfg.validate(); err != nil {
		return err
	}
	started := make(chan listeners, 1)
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, cfg, func(string) string { return "" }, stdout, stderr, started) }()
	select {
	case l := <-started:
		printDemo(stdout, l, backends.List())
	case err := <-errc:
		return err
	}
	return <-errc
}

var demoText = template.Must(template.New("demo").Parse(`
mcp-gateway demo: the gateway on http://{{.MCP}}/mcp fronts {{len .Backends}} MCP servers:
{{range .Backends}}  {{.Name}}  {{.URL}}
{{end}}
Authentication is OFF in this demo (loopback only). Tools are namespaced <backend>__<tool>.

Try (MCP 2026-07-28 over plain HTTP):

  # mcp METHOD [NAME] [PARAMS] [META]: PARAMS and META are extra JSON members, each led by a comma
  mcp() { curl -sS http://{{.MCP}}/mcp -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H "Mcp-Method: $1" ${2:+-H "Mcp-Name: $2"} -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}$4}${2:+,\"name\":\"$2\"}$3}}"; echo; }

  mcp server/discover
  mcp tools/list
  mcp tools/call notes__add_note ',"arguments":{"title":"hello","body":"from the gateway"}'
  mcp tools/call notes__list_notes
  mcp tools/call toolbox__count_slowly ',"arguments":{"n":3}' ',"progressToken":"p1"'    # SSE with progress
  mcp tools/call nobody__nothing          # unknown backend: 400 -32602
  mcp initialize                          # removed in 2026-07-28: 404 -32601

Health and metrics: curl -s http://{{.Admin}}/readyz ; curl -s http://{{.Admin}}/metrics | head
Press Ctrl-C to stop.
`))

func printDemo(w io.Writer, l listeners, backends []demo.Backend) {
	var b strings.Builder
	_ = demoText.Execute(&b, struct {
		MCP, Admin string
		Backends   []demo.Backend
	}{l.MCP, l.Admin, backends})
	fmt.Fprint(w, b.String())
}
