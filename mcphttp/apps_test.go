package mcphttp

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// appsGateway is the endpoint over alpha (a Go SDK backend serving an MCP App in the documented
// shapes), beta (serving another app when betaApp) and plain (no app), with apps switched on.
func appsGateway(t *testing.T, cfg Config, betaApp bool) string {
	t.Helper()
	return appsGatewaySwitch(t, cfg, betaApp, true)
}

// appsGatewaySwitch is appsGateway with the apps switch as given.
func appsGatewaySwitch(t *testing.T, cfg Config, betaApp, enabled bool) string {
	t.Helper()
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"))
	var betaOpts []mcptest.Option
	if betaApp {
		betaOpts = append(betaOpts, mcptest.WithApp("maps"))
	}
	beta := mcptest.StartServer(t, "beta", betaOpts...)
	plain := mcptest.StartServer(t, "plain")
	ucfg := upstreams.Config{Apps: upstreams.AppsConfig{Enabled: enabled}, Upstreams: []upstreams.UpstreamConfig{
		{Name: "alpha", URL: alpha.URL()}, {Name: "beta", URL: beta.URL()}, {Name: "plain", URL: plain.URL()}}}
	_, e := testServer(t, cfg, ucfg, upstreams.Options{}, Deps{})
	return serveTest(t, e).URL + DefaultPath
}

func callName(t *testing.T, url, name string) *response {
	t.Helper()
	return do(t, "POST", url, modern("tools/call", name), body("tools/call", `,"name":`+jsonString(name)+`,"arguments":{}`))
}

// TestAppsRoute: stage route tells the model's path (namespaced names) from an app's (the
// backend's own names) as far as the request allows, and no further.
func TestAppsRoute(t *testing.T) {
	url := appsGateway(t, Config{}, false)
	for _, tt := range []struct {
		name, want string // want: the tool's answer, or "" for an unknown tool
	}{
		{"refresh_dashboard", "refresh_dashboard of weather"},            // the app's call of its app-only tool
		{"show_dashboard", "show_dashboard of weather"},                  // the app's call of a tool both may call
		{"alpha__show_dashboard", "show_dashboard of weather"},           // the model's
		{"alpha__explain_dashboard", "explain_dashboard of weather"},     // model-only, by the model
		{"alpha__refresh_dashboard", ""},                                 // app-only, never by its namespaced name
		{"explain_dashboard", ""},                                        // model-only: no app may call it
		{mcptest.ToolFail, mcptest.FailText},                             // three backends have it, one serves apps
		{"nope", ""},                                                     // no backend has it
		{"plain__" + mcptest.ToolWhoAmI, `"` + mcptest.ToolWhoAmI + `"`}, // a plain namespaced call is untouched
	} {
		r := callName(t, url, tt.name)
		if tt.want == "" {
			if r.Status != 400 || r.RPC.Error == nil || r.RPC.Error.Code != jsonrpc.CodeInvalidParams || r.RPC.Error.Message != unknownToolText(tt.name) {
				t.Errorf("%s: %d %s, want the unknown-tool answer", tt.name, r.Status, r.Body)
			}
			continue
		}
		if r.Status != 200 || r.RPC.Error != nil || !strings.Contains(string(r.RPC.Result), tt.want) {
			t.Errorf("%s: %d %s, want %s", tt.name, r.Status, r.Body, tt.want)
		}
	}
}

// TestAppsRouteAmbiguous: a backend's own name two backends serving apps have is refused with an
// answer that says why, naming neither backend.
func TestAppsRouteAmbiguous(t *testing.T) {
	url := appsGateway(t, Config{}, true)
	r := callName(t, url, "refresh_dashboard")
	if r.Status != 400 || r.RPC.Error == nil || r.RPC.Error.Code != jsonrpc.CodeInvalidParams ||
		!strings.Contains(r.RPC.Error.Message, "more than one backend serving MCP Apps") ||
		!strings.Contains(string(r.RPC.Error.Data), `"ambiguous-tool-name"`) ||
		strings.Contains(r.RPC.Error.Message, "alpha") || strings.Contains(r.RPC.Error.Message, "beta") {
		t.Fatalf("ambiguous: %d %s", r.Status, r.Body)
	}
	if r := callName(t, url, mcptest.ToolFail); r.RPC.Error == nil || !strings.Contains(string(r.RPC.Error.Data), `"ambiguous-tool-name"`) {
		t.Fatalf("a default tool of two backends serving apps: %d %s", r.Status, r.Body)
	}
	if r := callName(t, url, "alpha__show_dashboard"); r.Status != 200 || r.RPC.Error != nil {
		t.Fatalf("namespaced call beside an ambiguous name: %d %s", r.Status, r.Body)
	}
}

// TestAppsSearchNeverTakesBackendNames: call_tool is the model's meta-tool; find_tools never
// shows an app-only tool, and call_tool reaches neither an app-only tool nor a backend's own name.
func TestAppsSearchNeverTakesBackendNames(t *testing.T) {
	url := appsGateway(t, Config{Search: SearchConfig{Enabled: true}}, false)
	for _, n := range findNames(t, url, "refresh dashboard of the weather app") {
		if strings.Contains(n, "refresh_dashboard") {
			t.Fatalf("find_tools found the app-only tool: %s", n)
		}
	}
	for _, name := range []string{"alpha__refresh_dashboard", "refresh_dashboard", "show_dashboard"} {
		r := do(t, "POST", url, modern("tools/call", "call_tool"),
			body("tools/call", `,"name":"call_tool","arguments":{"name":`+jsonString(name)+`,"arguments":{}}`))
		if r.RPC.Error == nil && !strings.Contains(string(r.RPC.Result), `"isError":true`) {
			t.Errorf("call_tool %s: %d %s", name, r.Status, r.Body)
		}
	}
	if r := do(t, "POST", url, modern("tools/call", "call_tool"),
		body("tools/call", `,"name":"call_tool","arguments":{"name":"alpha__show_dashboard","arguments":{}}`)); r.RPC.Error != nil ||
		!strings.Contains(string(r.RPC.Result), "show_dashboard of weather") {
		t.Fatalf("call_tool of a model tool: %d %s", r.Status, r.Body)
	}
}

// TestAppsOff: with the switch off (the default) the gateway routes as it always did: a backend's
// own name is an unknown tool, and an app-only tool is called by its namespaced name, visibility
// being left to the host.
func TestAppsOff(t *testing.T) {
	url := appsGatewaySwitch(t, Config{}, false, false)
	if r := callName(t, url, "refresh_dashboard"); r.Status != 400 || r.RPC.Error == nil || r.RPC.Error.Message != unknownToolText("refresh_dashboard") {
		t.Errorf("own name with apps off: %d %s", r.Status, r.Body)
	}
	if r := callName(t, url, "alpha__refresh_dashboard"); r.Status != 200 || !strings.Contains(string(r.RPC.Result), "refresh_dashboard of weather") {
		t.Errorf("namespaced app-only tool with apps off: %d %s", r.Status, r.Body)
	}
}

// TestAppsToolSetNarrows: on a tool set's endpoint an app's own name resolves to the same
// namespaced tool, which the set must include: a set never widens what an app reaches.
func TestAppsToolSetNarrows(t *testing.T) {
	set := ToolsetConfig{Name: "show-only", Include: []SelectorConfig{{Upstream: "alpha", Tools: []string{"show_*"}}}}
	url := appsGateway(t, Config{Toolsets: []ToolsetConfig{set}}, false)
	setURL := strings.TrimSuffix(url, DefaultPath) + DefaultPath + "/show-only"
	if r := callName(t, setURL, "show_dashboard"); r.Status != 200 || !strings.Contains(string(r.RPC.Result), "show_dashboard of weather") {
		t.Errorf("own name of a tool in the set: %d %s", r.Status, r.Body)
	}
	if r := callName(t, setURL, "refresh_dashboard"); r.RPC.Error == nil || strings.Contains(string(r.Body), "refresh_dashboard of weather") {
		t.Errorf("own name of a tool outside the set: %d %s", r.Status, r.Body)
	}
}

// TestAppsOwnNameThatIsNamespaced: a backend's own tool name that is also a namespaced name of
// another backend ("plain__whoami" on alpha, whose app calls it so) is read as the namespaced
// name: the call reaches plain's whoami, never alpha's tool. The two readings cannot be told
// apart from the request, and consulting every backend's list on each namespaced call would let
// one failing backend stop the calls of all; docs/apps.md names the limit.
func TestAppsOwnNameThatIsNamespaced(t *testing.T) {
	own := "plain__" + mcptest.ToolWhoAmI
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"), mcptest.WithTool(
		&mcp.Tool{Name: own, InputSchema: map[string]any{"type": "object"},
			Meta: mcp.Meta{"ui": map[string]any{"resourceUri": mcptest.AppViewURI("weather"), "visibility": []any{"app"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "alpha's own"}}}, nil
		}))
	plain := mcptest.StartServer(t, "plain")
	ucfg := upstreams.Config{Apps: upstreams.AppsConfig{Enabled: true}, Upstreams: []upstreams.UpstreamConfig{
		{Name: "alpha", URL: alpha.URL()}, {Name: "plain", URL: plain.URL()}}}
	_, e := testServer(t, Config{}, ucfg, upstreams.Options{}, Deps{})
	url := serveTest(t, e).URL + DefaultPath
	r := callName(t, url, own)
	if r.Status != 200 || r.RPC.Error != nil || strings.Contains(string(r.RPC.Result), "alpha's own") ||
		len(plain.RequestsOf("tools/call")) != 1 || len(alpha.RequestsOf("tools/call")) != 0 {
		t.Fatalf("%s: %d %s; calls alpha %d, plain %d", own, r.Status, r.Body,
			len(alpha.RequestsOf("tools/call")), len(plain.RequestsOf("tools/call")))
	}
}

// unknownToolText is the unknown-tool answer for name with the default separator: quoted, with
// the hint when it has no separator.
func unknownToolText(name string) string {
	msg := "Invalid params: unknown tool " + strconv.Quote(name)
	if !strings.Contains(name, upstreams.DefaultSeparator) {
		msg += ": tools are named <backend>__<tool>"
	}
	return msg
}
