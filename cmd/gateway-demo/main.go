// Command gateway-demo runs a local demo of the MCP gateway: two demo MCP servers, a
// development-only token issuer and the gateway in front of them, all on loopback, and prints
// bearer tokens and commands to try. `make demo` runs it. The gateway is configured and served
// by internal/gateway exactly as `gateway serve` does it, defaults included.
//
// `gateway-demo issuer --audience URL` runs only the development token issuer, on a fixed
// loopback address, to try a configuration of one's own with `gateway serve` and test tokens.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/gateway"
	"github.com/mcp-gateway/gateway/upstreams"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := runDemo(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "gateway-demo:", err)
		}
		os.Exit(1)
	}
}

// demoTokenTTL keeps the printed demo tokens usable for a working day.
const demoTokenTTL = 8 * time.Hour

// runDemo starts the demo backends, a development-only token issuer and the gateway in front of
// them, all on loopback, and prints what to try. It runs until interrupted.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "issuer" {
		return devissuer.Command(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("gateway-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "MCP listener `address` (loopback only)")
	admin := fs.String("admin-listen", "127.0.0.1:9090", "admin listener `address` (loopback only)")
	noAuth := fs.Bool("no-auth", false, "run the demo without authentication")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !gateway.IsLoopbackAddr(*listen) || !gateway.IsLoopbackAddr(*admin) {
		return fmt.Errorf("the demo listens on loopback addresses only")
	}
	backends, err := demo.Start(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer backends.Close()

	// From NewConfig, like every command's configuration: the demo gets serve's defaults
	// (pre-2026 clients served among them).
	c := gateway.NewConfig()
	cfg := &c
	cfg.Log = gateway.LogConfig{Level: "warn", Format: "text"}
	cfg.Server.Listen, cfg.Admin.Listen = *listen, *admin
	// Loopback only (checked above), so the policy explainer needs no secret here.
	cfg.Admin.Explain.Enabled = true
	cfg.Server.PublicURL = "http://" + *listen + "/mcp"
	for _, b := range backends.List() {
		cfg.Upstreams = append(cfg.Upstreams, gateway.UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: b.Name, URL: b.URL}})
	}
	var users []demoUser
	if *noAuth {
		cfg.Auth.Disabled = true
	} else {
		iss, err := devissuer.New(devissuer.Options{Audience: cfg.Server.PublicURL, TTL: demoTokenTTL})
		if err != nil {
			return err
		}
		defer iss.Close()
		demoPolicy(cfg, iss.URL())
		if users, err = demoUsers(iss); err != nil {
			return err
		}
	}
	// Nothing balances load in front of the demo: Ctrl-C stops it at once.
	cfg.Server.DrainDelay = 0
	if err := cfg.Complete(); err != nil {
		return err
	}
	started := make(chan gateway.Listeners, 1)
	errc := make(chan error, 1)
	go func() { errc <- gateway.Serve(ctx, cfg, stdout, stderr, started) }()
	select {
	case l := <-started:
		printDemo(stdout, l, backends.List(), users)
	case err := <-errc:
		return err
	}
	return <-errc
}

// demoPolicy is the demo's authorization: reading notes needs notes:read, writing notes:write,
// deleting also asks the user to confirm, and the toolbox needs tools:use.
func demoPolicy(cfg *gateway.Config, issuer string) {
	cfg.Auth.Issuers = []authz.IssuerConfig{{Issuer: issuer}}
	cfg.Auth.ResourceMetadata.ScopesSupported = []string{"notes:read", "notes:write", "tools:use"}
	cfg.Auth.ResourceMetadata.ResourceName = "mcp-gateway demo"
	cfg.Auth.Policy.Rules = []authz.RuleConfig{
		{ID: "notes-read", Upstream: demo.NotesName, Tools: []string{"list_notes", "search_notes", "get_note"},
			Prompts: []string{"*"}, Resources: []string{"*"}, AnyScope: []string{"notes:read"}},
		{ID: "notes-write", Upstream: demo.NotesName, Tools: []string{"add_note"}, AllScopes: []string{"notes:write"}},
		{ID: "notes-delete", Upstream: demo.NotesName, Tools: []string{"delete_note"}, AllScopes: []string{"notes:write"}, Confirm: authz.ConfirmForm},
		{ID: "toolbox", Upstream: demo.ToolboxName, Tools: []string{"*"}, AnyScope: []string{"tools:use"}},
	}
}

type demoUser struct{ Name, Scopes, Token string }

func demoUsers(iss *devissuer.Issuer) ([]demoUser, error) {
	users := []demoUser{
		{Name: "alice", Scopes: "notes:read notes:write tools:use"},
		{Name: "bob", Scopes: "notes:read"},
	}
	for i := range users {
		tok, err := iss.Mint(devissuer.Claims{"sub": users[i].Name, "scope": users[i].Scopes})
		if err != nil {
			return nil, err
		}
		users[i].Token = tok
	}
	return users, nil
}

var demoText = template.Must(template.New("demo").Funcs(template.FuncMap{"upper": strings.ToUpper}).Parse(`
mcp-gateway demo: the gateway on http://{{.MCP}}/mcp fronts {{len .Backends}} MCP servers:
{{range .Backends}}  {{.Name}}  {{.URL}}
{{end}}Tools are namespaced <backend>__<tool>. Everything listens on loopback only.
{{if .Users}}
A development-only token issuer signed these bearer tokens (valid 8 hours):
{{range .Users}}
  {{.Name}} ({{.Scopes}}):
  export {{upper .Name}}='{{.Token}}'
{{end}}
Try (MCP 2026-07-28 over plain HTTP; TOKEN selects the caller):

  # mcp METHOD [NAME] [PARAMS] [META]: PARAMS and META are extra JSON members, each led by a comma
  mcp() { curl -sS http://{{.MCP}}/mcp -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    ${TOKEN:+-H "Authorization: Bearer $TOKEN"} -H "Mcp-Method: $1" ${2:+-H "Mcp-Name: $2"} \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{}}$4}${2:+,\"name\":\"$2\"}$3}}"; echo; }

  TOKEN= mcp tools/list                                   # no token: 401 with a resource_metadata challenge
  TOKEN=$BOB mcp tools/list                               # bob sees only the notes reading tools
  TOKEN=$BOB mcp tools/call notes__add_note ',"arguments":{"title":"hi"}'  # 403 insufficient_scope: notes:write
  TOKEN=$BOB mcp tools/call toolbox__echo ',"arguments":{"text":"hi"}'     # 403 again: the toolbox needs tools:use
  TOKEN=$ALICE mcp tools/call notes__add_note ',"arguments":{"title":"hello","body":"from the gateway"}'
  TOKEN=$ALICE mcp tools/call toolbox__count_slowly ',"arguments":{"n":3}' ',"progressToken":"p1"'  # SSE progress
  TOKEN=$ALICE mcp tools/call notes__delete_note ',"arguments":{"id":"1"}'  # asks alice to confirm (input_required)
  curl -s http://{{.MCP}}/.well-known/oauth-protected-resource/mcp; echo
  curl -s http://{{.Admin}}/authz/explain -H 'Content-Type: application/json' \
    -d '{"claims":{"sub":"bob","scope":"notes:read"},"kind":"tool","upstream":"notes","name":"add_note"}'; echo
{{else}}
Authentication is OFF (--no-auth). Try:

  mcp() { curl -sS http://{{.MCP}}/mcp -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H "Mcp-Method: $1" ${2:+-H "Mcp-Name: $2"} \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}$4}${2:+,\"name\":\"$2\"}$3}}"; echo; }

  mcp tools/list
  mcp tools/call toolbox__count_slowly ',"arguments":{"n":3}' ',"progressToken":"p1"'
{{end}}
  mcp server/discover
  mcp initialize                                          # removed in 2026-07-28: 404 -32601

A pre-2026 client (2025-11-25, 2025-06-18: the TypeScript SDK v1, most agent hosts) uses the
same endpoint: initialize, then send back the Mcp-Session-Id it returns. By hand:

  legacy() { curl -sS -i http://{{.MCP}}/mcp -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' ${TOKEN:+-H "Authorization: Bearer $TOKEN"} \
    ${SID:+-H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25'} -d "$1"; echo; }

  {{if .Users}}TOKEN=$ALICE {{end}}legacy '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
  SID='<the Mcp-Session-Id header above>'
  {{if .Users}}TOKEN=$ALICE {{end}}legacy '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'

Health and metrics: curl -s http://{{.Admin}}/readyz ; curl -s http://{{.Admin}}/metrics | grep mcp_gateway_
Press Ctrl-C to stop.
`))

func printDemo(w io.Writer, l gateway.Listeners, backends []demo.Backend, users []demoUser) {
	var b strings.Builder
	_ = demoText.Execute(&b, struct {
		MCP, Admin string
		Backends   []demo.Backend
		Users      []demoUser
	}{l.MCP, l.Admin, backends, users})
	fmt.Fprint(w, b.String())
}
