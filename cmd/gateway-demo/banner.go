package main

import (
	"fmt"
	"io"
	"strings"
	"text/template"

	"github.com/mcp-gateway/gateway/internal/demo"
)

// Markers around the walkthrough in the banner, so a reader (and the test that runs it) can
// tell the lines to paste from the rest.
const (
	walkthroughStart = "---- paste into bash from here ----"
	walkthroughEnd   = "---- to here ----"
)

// bannerData is what the banner shows.
type bannerData struct {
	MCP, Admin string // listener addresses
	Issuer     string // the development issuer's URL; "" without authentication
	Backends   []demo.Backend
	Users      []demoUser
	Start, End string // the walkthrough's markers
}

func (s *demoSite) banner() bannerData {
	b := bannerData{MCP: s.mcp, Admin: s.admin, Backends: s.backends, Users: s.users, Start: walkthroughStart, End: walkthroughEnd}
	if s.iss != nil {
		b.Issuer = s.iss.URL()
	}
	return b
}

// walkthrough is the text between the markers. With authentication it is also the README's
// demo walkthrough, rendered with the default addresses (TestREADMEWalkthrough). Each command
// line's comment says what it shows; TestWalkthrough runs every line against the demo and
// checks exactly that.
const walkthrough = `{{define "walkthrough"}}{{if .Issuer}}  # mcp METHOD [NAME] [PARAMS] [META] sends one MCP 2026-07-28 request as the caller whose token
  # is in $TOKEN (none when empty). PARAMS and META are extra JSON members, each led by a comma.
  # curl -i shows the status line and headers; the response is also kept in $MCPLOG.
  MCPLOG=$(mktemp)
  mcp() { curl -sS -i -N http://{{.MCP}}/mcp -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    ${TOKEN:+-H "Authorization: Bearer $TOKEN"} -H "Mcp-Method: $1" ${2:+-H "Mcp-Name: $2"} \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{\"form\":{},\"url\":{}}}$4}${2:+,\"name\":\"$2\"}$3}}" \
    | tee "$MCPLOG"; echo; }

  TOKEN= mcp tools/list      # no token: 401, WWW-Authenticate names the resource_metadata
  curl -sS -i http://{{.MCP}}/.well-known/oauth-protected-resource/mcp; echo   # the issuer to ask
  TOKEN=$BOB mcp server/discover   # any valid token: the versions and capabilities served
  TOKEN=$BOB mcp tools/list  # reading tools; add_note and delete_note marked with notes:write
  TOKEN=$BOB mcp tools/call notes__add_note ',"arguments":{"title":"hi"}'  # 403 insufficient_scope
  TOKEN=$BOB mcp tools/call toolbox__echo ',"arguments":{"text":"hi"}'  # 403: needs tools:use
  TOKEN=$ALICE mcp tools/call notes__add_note ',"arguments":{"title":"hello","body":"from the gateway"}'
  TOKEN=$ALICE mcp tools/call toolbox__count_slowly ',"arguments":{"n":3}' ',"progressToken":"p1"'  # SSE
  TOKEN=$ALICE mcp tools/call notes__delete_note ',"arguments":{"id":"1"}'  # input_required: a url
  # Open that url in a browser, sign in as alice, Approve and confirm; then retry with its requestState:
  STATE=$(sed -n 's/.*"requestState":"\([^"]*\)".*/\1/p' "$MCPLOG")
  TOKEN=$ALICE mcp tools/call notes__delete_note ',"arguments":{"id":"1"},"requestState":"'$STATE'","inputResponses":{"io.mcp-gateway/confirm":{"action":"accept"}}'
  TOKEN=$ALICE mcp initialize  # removed in 2026-07-28: -32601
  curl -sS -i http://{{.Admin}}/authz/explain -H 'Content-Type: application/json' \
    -d '{"claims":{"sub":"bob","scope":"notes:read"},"kind":"tool","upstream":"notes","name":"add_note"}'; echo

  # A pre-2026 client (2025-03-26 to 2025-11-25: the TypeScript SDK v1, most agent hosts) uses the
  # same endpoint: initialize, then send the Mcp-Session-Id it returns with every request.
  legacy() { curl -sS -i -N http://{{.MCP}}/mcp -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' ${TOKEN:+-H "Authorization: Bearer $TOKEN"} \
    ${SID:+-H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25'} -d "$1" | tee "$MCPLOG"; echo; }
  SID= TOKEN=$ALICE legacy '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
  SID=$(sed -n 's/^Mcp-Session-Id: *\([^[:space:]]*\).*/\1/p' "$MCPLOG")
  TOKEN=$ALICE legacy '{"jsonrpc":"2.0","method":"notifications/initialized"}'  # 202
  TOKEN=$ALICE legacy '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'

  curl -sS -i http://{{.Admin}}/readyz; echo
  curl -sS http://{{.Admin}}/metrics | grep '^mcp_gateway_authz_decisions_total'
{{- else}}  # mcp METHOD [NAME] [PARAMS] [META] sends one MCP 2026-07-28 request; PARAMS and META
  # are extra JSON members, each led by a comma. curl -i shows the status line and headers.
  mcp() { curl -sS -i -N http://{{.MCP}}/mcp -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H "Mcp-Method: $1" ${2:+-H "Mcp-Name: $2"} \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}$4}${2:+,\"name\":\"$2\"}$3}}"; echo; }

  mcp server/discover
  mcp tools/list             # every tool of both backends: nobody is checked
  mcp tools/call toolbox__count_slowly ',"arguments":{"n":3}' ',"progressToken":"p1"'  # SSE

  # A pre-2026 client (2025-03-26 to 2025-11-25: the TypeScript SDK v1, most agent hosts) uses the
  # same endpoint: initialize, then send the Mcp-Session-Id it returns with every request.
  MCPLOG=$(mktemp)
  legacy() { curl -sS -i -N http://{{.MCP}}/mcp -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    ${SID:+-H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25'} -d "$1" | tee "$MCPLOG"; echo; }
  SID= legacy '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
  SID=$(sed -n 's/^Mcp-Session-Id: *\([^[:space:]]*\).*/\1/p' "$MCPLOG")
  legacy '{"jsonrpc":"2.0","method":"notifications/initialized"}'  # 202
  legacy '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'

  curl -sS -i http://{{.Admin}}/readyz; echo
{{- end}}{{end}}`

var bannerText = template.Must(template.New("banner").Funcs(template.FuncMap{"upper": strings.ToUpper}).Parse(walkthrough + `
mcp-gateway demo: the gateway on http://{{.MCP}}/mcp fronts {{len .Backends}} MCP servers:
{{range .Backends}}  {{printf "%-8s" .Name}} {{.URL}}
{{end}}Tools are namespaced <backend>__<tool>. Its admin listener (health, metrics, the policy
explainer) is on http://{{.Admin}}. Everything listens on loopback only.
{{if .Issuer}}
A development-only OpenID issuer on {{.Issuer}} signed these bearer tokens (valid 8 hours).
The gateway's approval page signs users in there: pick alice or bob, no password.
{{range .Users}}
  {{.Name}} ({{.Scopes}}):
  export {{upper .Name}}='{{.Token}}'
{{end}}
An MCP client of your own (2026-07-28 or pre-2026) connects to http://{{.MCP}}/mcp
with the header "Authorization: Bearer <one of the tokens above>".

Paste the two export lines, then the lines below, into bash (the README walks through them):
{{else}}
Authentication is OFF (--no-auth). An MCP client of your own (2026-07-28 or pre-2026) connects
to http://{{.MCP}}/mcp. Paste the lines below into bash:
{{end}}
{{.Start}}
{{template "walkthrough" .}}
{{.End}}

Press Ctrl-C to stop.
`))

// printDemo writes the banner.
func printDemo(w io.Writer, b bannerData) {
	var sb strings.Builder
	if err := bannerText.Execute(&sb, b); err != nil {
		fmt.Fprintln(w, "gateway-demo: banner:", err)
		return
	}
	fmt.Fprint(w, sb.String())
}

// walkthroughText is the walkthrough alone, as it appears between the markers.
func walkthroughText(b bannerData) (string, error) {
	var sb strings.Builder
	err := bannerText.ExecuteTemplate(&sb, "walkthrough", b)
	return sb.String(), err
}
