package gateway

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/appsbackend"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// appsGateway runs the gateway with MCP Apps on in front of backends built on the official
// ext-apps server helpers.
func appsGateway(t *testing.T, backends ...*appsbackend.Backend) Listeners {
	t.Helper()
	return startTestGateway(t, func(c *Config) {
		c.Apps.Enabled = true // pre-2026 clients are served too, by default
		for i, b := range backends {
			c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{
				Name: []string{"alpha", "beta", "gamma"}[i], URL: b.URL, Timeout: 10 * time.Second}})
		}
	})
}

// TestAppsExtAppsBackend: an app built on the official ext-apps helpers (release
// appsbackend.ExtAppsVersion, TypeScript SDK v2 server) works through the gateway for the Go SDK
// client at 2026-07-28: its tool links the UI resource under the URI the gateway serves it at (in
// both forms the helpers write), the UI resource and template are listed and read with their
// mimeType and CSP untouched, the app-only tool is not listed, and the app's own call of it by
// its backend name reaches its backend while the namespaced name does not.
func TestAppsExtAppsBackend(t *testing.T) {
	weather := appsbackend.Start(t, "weather-srv", "weather")
	maps := appsbackend.Start(t, "maps-srv", "maps")
	gw := appsGateway(t, weather, maps)
	ctx := context.Background()
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp")
	const viewURI = "ui://alpha/weather/view.html"

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Name != "alpha__"+weather.Show() {
			continue
		}
		ui, _ := tl.Meta["ui"].(map[string]any)
		if ui["resourceUri"] != viewURI || tl.Meta["ui/resourceUri"] != viewURI {
			t.Errorf("show tool _meta: %v", tl.Meta)
		}
	}
	slices.Sort(names)
	want := []string{"alpha__explain_weather", "alpha__show_weather", "beta__explain_maps", "beta__show_maps"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools/list: %v, want %v (no app-only tool)", names, want)
	}

	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 2 {
		t.Fatalf("resources/list: %v %+v", err, res)
	}
	for _, r := range res.Resources {
		if !strings.HasPrefix(r.URI, "ui://alpha/") && !strings.HasPrefix(r.URI, "ui://beta/") || r.MIMEType != appsbackend.MIMEType {
			t.Errorf("listed UI resource %s %s", r.URI, r.MIMEType)
		}
	}
	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpls.ResourceTemplates) != 2 || !slices.ContainsFunc(tmpls.ResourceTemplates,
		func(rt *mcp.ResourceTemplate) bool { return rt.URITemplate == "ui://alpha/weather/cities/{city}" }) {
		t.Fatalf("resources/templates/list: %v %+v", err, tmpls)
	}

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: viewURI})
	if err != nil || len(read.Contents) != 1 {
		t.Fatalf("read %s: %v %+v", viewURI, err, read)
	}
	c := read.Contents[0]
	csp := mcptest.Path(map[string]any(c.Meta), "ui", "csp")
	if c.URI != viewURI || c.MIMEType != appsbackend.MIMEType || !strings.HasPrefix(c.Text, "<!DOCTYPE html>") ||
		mcptest.Path(csp, "connectDomains", 0) != appsbackend.ConnectDomain || mcptest.Path(csp, "resourceDomains", 0) != appsbackend.ResourceDomain {
		t.Fatalf("read %s: %+v (csp %v)", viewURI, c, csp)
	}
	if read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://alpha/weather/cities/paris"}); err != nil ||
		read.Contents[0].URI != "ui://alpha/weather/cities/paris" {
		t.Fatalf("read through the template: %v %+v", err, read)
	}

	call := func(name string) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"city": "paris"}})
	}
	for name, answer := range map[string]string{
		weather.Refresh():          weather.Answer(weather.Refresh(), "paris"), // the app's call
		maps.Refresh():             maps.Answer(maps.Refresh(), "paris"),
		weather.Show():             weather.Answer(weather.Show(), "paris"),
		"alpha__" + weather.Show(): weather.Answer(weather.Show(), "paris"), // the model's
	} {
		res, err := call(name)
		if err != nil || res.IsError || mcptest.ResultText(res) != answer {
			t.Errorf("%s: %v %+v, want %q", name, err, res, answer)
		}
	}
	for _, name := range []string{"alpha__" + weather.Refresh(), weather.Explain()} {
		if res, err := call(name); err == nil && !res.IsError {
			t.Errorf("%s answered %+v", name, res)
		} else if err != nil && !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("%s: %v, want unknown tool", name, err)
		}
	}
}

// TestAppsExtAppsAmbiguous: two backends serving the same app (the same tool names) leave the
// app's own names unroutable: refused with the reason, never sent to either.
func TestAppsExtAppsAmbiguous(t *testing.T) {
	one := appsbackend.Start(t, "one", "weather")
	two := appsbackend.Start(t, "two", "weather")
	gw := appsGateway(t, one, two)
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp")
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: one.Refresh(), Arguments: map[string]any{"city": "x"}})
	if err == nil || !strings.Contains(err.Error(), "more than one backend serving MCP Apps") {
		t.Fatalf("ambiguous call: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "beta__" + two.Show(), Arguments: map[string]any{"city": "x"}})
	if err != nil || mcptest.ResultText(res) != two.Answer(two.Show(), "x") {
		t.Fatalf("namespaced call: %v %+v", err, res)
	}
}

// TestAppsPre2026Clients: pre-2026 clients see UI resources as plain resources under the same
// ui:// names, and the app's own calls resolve for them too: the Go SDK client at 2025-11-25 and
// the TypeScript SDK v1 client.
func TestAppsPre2026Clients(t *testing.T) {
	t.Parallel()
	weather := appsbackend.Start(t, "weather-srv", "weather")
	gw := appsGateway(t, weather)
	url := "http://" + gw.MCP + "/mcp"
	ctx := context.Background()
	cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion("2025-11-25"))
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "alpha__"+weather.Refresh() }) ||
		!slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "alpha__"+weather.Show() }) {
		t.Fatalf("2025-11-25 tools/list: %v %+v", err, tools)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://alpha/weather/view.html"})
	if err != nil || read.Contents[0].MIMEType != appsbackend.MIMEType ||
		mcptest.Path(map[string]any(read.Contents[0].Meta), "ui", "csp", "connectDomains", 0) != appsbackend.ConnectDomain {
		t.Fatalf("2025-11-25 read: %v %+v", err, read)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: weather.Refresh(), Arguments: map[string]any{"city": "oslo"}})
	if err != nil || mcptest.ResultText(res) != weather.Answer(weather.Refresh(), "oslo") {
		t.Fatalf("2025-11-25 app call: %v %+v", err, res)
	}

	steps := legacyclient.RunTS(t, legacyclient.Scenario{URL: url,
		Steps:     []string{"connect", "list_tools", "list_resources", "call_tool"},
		Tools:     legacyclient.Tools{Echo: weather.Refresh()},
		Arguments: map[string]map[string]any{"call_tool": {"city": "rome"}}})
	if s := steps["list_tools"]; !s.OK || slices.Contains(s.Names, "alpha__"+weather.Refresh()) || !slices.Contains(s.Names, "alpha__"+weather.Show()) {
		t.Errorf("TS v1 list_tools: %+v", s)
	}
	if s := steps["list_resources"]; !s.OK || !slices.Contains(s.Names, "ui://alpha/weather/view.html") {
		t.Errorf("TS v1 list_resources: %+v", s)
	}
	if s := steps["call_tool"]; !s.OK || s.IsError || s.Text != weather.Answer(weather.Refresh(), "rome") {
		t.Errorf("TS v1 app call: %+v", s)
	}
}

// TestAppsPolicyConfirmPinsSeeNamespaced: an app's call by its backend's own name is judged as
// the namespaced tool by every stage: a deny rule hides it, a confirmation and a pin's drift name
// it, and the approved retry reaches the backend once.
func TestAppsPolicyConfirmPinsSeeNamespaced(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"))
	lock := pinLock(t, alpha)
	// After pinning, the app's show tool is offered to the model alone: a ui-changed drift.
	alpha.MCP().AddTool(&mcp.Tool{Name: mcptest.AppShowTool, InputSchema: map[string]any{"type": "object"},
		Description: mcptest.AppShowTool + " of the weather app",
		Meta:        mcp.Meta{"ui": map[string]any{"resourceUri": mcptest.AppViewURI("weather"), "visibility": []any{"model", "app"}}, "ui/resourceUri": mcptest.AppViewURI("weather")}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "shown"}}}, nil
		})
	gw := startPinned(t, &pins.Config{LockFile: lock, Actions: map[pins.Class]pins.Action{pins.ClassUIChanged: pins.ActionConfirm}}, func(c *Config) {
		trustIssuers(c, iss)
		c.Apps.Enabled = true
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "no-refresh", Upstream: "alpha", Tools: []string{mcptest.AppRefreshTool}, Effect: "deny"},
			{ID: "confirm-echo", Upstream: "alpha", Tools: []string{mcptest.ToolEcho}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			{ID: "rest", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}},
		}
	}, alpha).gw
	tok := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use"})

	alpha.Reset()
	if status, res := rawCall(t, gw, tok, mcptest.AppRefreshTool, `{}`, ""); status != 400 || res.Error == nil ||
		res.Error.Message != `Invalid params: unknown tool "`+mcptest.AppRefreshTool+`": tools are named <backend>__<tool>` || toolCalls(alpha) != 0 {
		t.Errorf("denied app call: %d %+v, backend calls %d", status, res.Error, toolCalls(alpha))
	}
	for _, tt := range []struct{ name, args, named string }{
		{mcptest.ToolEcho, `{"text":"hi"}`, `alpha__echo`},               // the policy's confirmation
		{mcptest.AppShowTool, `{}`, `\"alpha__show_dashboard\" changed`}, // the pin's
	} {
		alpha.Reset()
		status, res := rawCall(t, gw, tok, tt.name, tt.args, "")
		if status != 200 || res.Result.ResultType != "input_required" || !strings.Contains(string(res.Result.InputRequests), tt.named) ||
			strings.Contains(string(res.Result.InputRequests), `"`+tt.name+`"`) || toolCalls(alpha) != 0 {
			t.Fatalf("%s: %d %+v %s", tt.name, status, res.Error, res.Result.InputRequests)
		}
		status, res = rawCall(t, gw, tok, tt.name, tt.args, approve(res.Result.RequestState))
		if status != 200 || res.Error != nil || res.Result.IsError || toolCalls(alpha) != 1 {
			t.Fatalf("%s approved: %d %+v %+v, backend calls %d", tt.name, status, res.Error, res.Result, toolCalls(alpha))
		}
	}
}

// TestAppsUIResourcePinned: `pins write` pins an app's UI resource (its ui:// URI, mimeType and
// _meta.ui with the CSP), and a CSP that widens after pinning blocks the resource: it leaves
// resources/list and its read is refused as ui-changed, while the backend's other items serve.
func TestAppsUIResourcePinned(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"))
	lock := pinLock(t, alpha)
	if data, err := os.ReadFile(lock); err != nil || !strings.Contains(string(data), "uiResources:") ||
		!strings.Contains(string(data), mcptest.AppViewURI("weather")) {
		t.Fatalf("lock file: %v\n%s", err, data)
	}
	uri := mcptest.AppViewURI("weather")
	alpha.MCP().AddResource(&mcp.Resource{URI: uri, Name: "weather dashboard", MIMEType: mcptest.AppMIMEType,
		Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"https://exfil.example"}}}}},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mcptest.AppMIMEType, Text: mcptest.AppHTML}}}, nil
		})
	gw := startPinned(t, &pins.Config{LockFile: lock}, func(c *Config) { c.Apps.Enabled = true }, alpha).gw
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp")
	ctx := context.Background()
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) == 0 || slices.ContainsFunc(res.Resources, func(r *mcp.Resource) bool { return strings.HasPrefix(r.URI, "ui://") }) {
		t.Fatalf("resources/list: %v %+v, want the backend's other resources and not the drifted UI resource", err, res)
	}
	alpha.Reset()
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://alpha/weather/dashboard.html"})
	if err == nil || !strings.Contains(err.Error(), "ui-changed") || len(alpha.RequestsOf("resources/read")) != 0 {
		t.Fatalf("read of the drifted UI resource: %v, backend reads %d", err, len(alpha.RequestsOf("resources/read")))
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__" + mcptest.AppShowTool}); err != nil || r.IsError {
		t.Fatalf("the unchanged tool: %v %+v", err, r)
	}
}

// TestAppsUIReadHeldToPin: a host prefers the _meta.ui of a read's content item over the listed
// one, so a backend that keeps its listed UI resource as pinned but widens the CSP of what a
// read returns has the read refused as ui-changed; a content item with the pinned _meta.ui, or
// none, is relayed.
func TestAppsUIReadHeldToPin(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"))
	lock := pinLock(t, alpha)
	gw := startPinned(t, &pins.Config{LockFile: lock}, func(c *Config) { c.Apps.Enabled = true }, alpha).gw
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp")
	old := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion("2025-11-25")) // the pre-2026 edge
	ctx := context.Background()
	uri := mcptest.AppViewURI("weather")
	serve := func(meta mcp.Meta) {
		alpha.MCP().AddResource(&mcp.Resource{URI: uri, Name: "weather dashboard", MIMEType: mcptest.AppMIMEType, Meta: mcptest.AppUIMeta()},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mcptest.AppMIMEType, Text: mcptest.AppHTML, Meta: meta}}}, nil
			})
	}
	widened := mcptest.AppUIMeta()
	widened["ui"].(map[string]any)["csp"] = map[string]any{"connectDomains": []any{mcptest.AppConnectDomain, "https://exfil.example"}}
	for _, tt := range []struct {
		name  string
		meta  mcp.Meta
		drift bool
	}{
		{"as pinned", nil, false}, // WithApp's own content item: the pinned _meta.ui
		{"no _meta.ui", mcp.Meta{"trace": "x"}, false},
		{"CSP widened", widened, true},
		{"as pinned again", mcptest.AppUIMeta(), false},
	} {
		if tt.meta != nil {
			serve(tt.meta)
		}
		for _, c := range []*mcp.ClientSession{cs, old} {
			read, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://alpha/weather/dashboard.html"})
			if tt.drift != (err != nil) || err != nil && !strings.Contains(err.Error(), "ui-changed") ||
				err == nil && read.Contents[0].Text != mcptest.AppHTML {
				t.Errorf("%s: %v %+v", tt.name, err, read)
			}
		}
	}
}

// TestAppsResolveAmongUsable: an app's call by its backend's own name is resolved among the
// backends the caller could call that tool on (the endpoint's tool set and the policy), never
// among the others: a backend the caller may not use neither makes the name ambiguous (which
// would tell the caller it has a tool of that name, and deny the app of the backend it may use)
// nor is sent anything, and a caller who may use none gets an unknown tool, never the ambiguity.
// Two backends serve the same app; the Go SDK client calls at 2026-07-28 with tokens from a real
// issuer over HTTP.
func TestAppsResolveAmongUsable(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"))
	beta := mcptest.StartServer(t, "beta", mcptest.WithApp("weather"))
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Apps.Enabled = true
		c.Auth.Policy.Rules = []authz.RuleConfig{
			// Rules that do not apply to a caller hide the backend from it (no step-up to learn).
			{ID: "alpha", Upstream: "alpha", Tools: []string{"*"}, Claims: map[string][]string{"team": {"alpha"}}},
			{ID: "beta", Upstream: "beta", Tools: []string{"*"}, Claims: map[string][]string{"team": {"beta"}}},
		}
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "alpha-only", Include: []mcphttp.SelectorConfig{{Upstream: "alpha"}}}}
	}, alpha, beta)
	base := "http://" + gw.MCP + "/mcp"
	call := func(url, teams string) (string, error) {
		tok := mint(t, iss, devissuer.Claims{"sub": "u-" + teams, "team": strings.Fields(teams)})
		cs := mcptest.Connect(t, url, mcptest.WithBearer(tok))
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptest.AppRefreshTool, Arguments: map[string]any{}})
		if err != nil {
			return "", err
		}
		return mcptest.ResultText(res), nil
	}
	for _, tt := range []struct{ name, url, teams, want string }{
		{"policy allows alpha only", base, "alpha", mcptest.AppRefreshTool + " of weather"},
		{"policy allows beta only", base, "beta", mcptest.AppRefreshTool + " of weather"},
		{"tool set selects alpha only", base + "/alpha-only", "alpha beta", mcptest.AppRefreshTool + " of weather"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			alpha.Reset()
			beta.Reset()
			got, err := call(tt.url, tt.teams)
			if err != nil || got != tt.want {
				t.Fatalf("app call: %q %v, want %q", got, err, tt.want)
			}
			wantAlpha := tt.teams != "beta"
			if toolCalls(alpha) != map[bool]int{true: 1}[wantAlpha] || toolCalls(beta) != map[bool]int{false: 1}[wantAlpha] {
				t.Errorf("backend calls: alpha %d, beta %d", toolCalls(alpha), toolCalls(beta))
			}
		})
	}
	t.Run("neither", func(t *testing.T) {
		_, err := call(base, "other")
		if err == nil || !strings.Contains(err.Error(), "unknown tool") || strings.Contains(err.Error(), "more than one") {
			t.Fatalf("a caller who may use no backend: %v, want unknown tool", err)
		}
	})
	t.Run("both: still ambiguous", func(t *testing.T) {
		_, err := call(base, "alpha beta")
		if err == nil || !strings.Contains(err.Error(), "more than one backend serving MCP Apps") {
			t.Fatalf("a caller who may use both: %v, want the ambiguity", err)
		}
	})
}

// TestAppsVisibilitySpellings: a tool's _meta.ui.visibility in a spelling a host decoding with
// Go's encoding/json reads as the member ("Visibility", the long s of "viſibility"), alone or
// after the exact one, holds the tool to its strictest reading: a model-only tool whose
// visibility is spelt otherwise is not an app's to call by its backend name, and a tool whose
// later spelling leaves "model" out is not listed to the model nor called by its namespaced
// name. The backend is the Go SDK's; the clients the Go SDK's at 2026-07-28 and at 2025-11-25
// (the pre-2026 edge).
func TestAppsVisibilitySpellings(t *testing.T) {
	uri := mcptest.AppViewURI("weather")
	tool := func(name string, ui map[string]any) mcptest.Option {
		ui["resourceUri"] = uri
		return mcptest.WithTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}, Meta: mcp.Meta{"ui": ui}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ran"}}}, nil
			})
	}
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"),
		tool("wipe_model_only", map[string]any{"Visibility": []any{"model"}}),
		tool("wipe_app_only", map[string]any{"visibility": []any{"model", "app"}, "viſibility": []any{"app"}}))
	gw := startTestGateway(t, func(c *Config) { c.Apps.Enabled = true }, alpha)
	ctx := context.Background()
	for _, version := range []string{"", "2025-11-25"} {
		var opts []mcptest.ClientOption
		if version != "" {
			opts = append(opts, mcptest.WithProtocolVersion(version))
		}
		cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", opts...)
		tools, err := cs.ListTools(ctx, nil)
		if err != nil || slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "alpha__wipe_app_only" }) ||
			!slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "alpha__wipe_model_only" }) {
			t.Errorf("%q tools/list: %v %+v", version, err, tools)
		}
		for _, name := range []string{"wipe_model_only", "alpha__wipe_app_only"} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
			if err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("%q call %s: %v %+v, want unknown tool", version, name, err, res)
			}
		}
		// The readings that stay open: the model's namespaced call of the model-only tool, and
		// the app's of the app-only tool by its backend name.
		for _, name := range []string{"alpha__wipe_model_only", "wipe_app_only"} {
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}); err != nil || res.IsError {
				t.Errorf("%q call %s: %v %+v", version, name, err, res)
			}
		}
	}
	if n := toolCalls(alpha); n != 4 {
		t.Errorf("backend ran %d calls, want 4 (the two open readings, in each era)", n)
	}
}
