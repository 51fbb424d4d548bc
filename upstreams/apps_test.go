package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// appsRegistry is alpha and beta, each a Go SDK backend serving an MCP App in the documented
// shapes (mcptest.WithApp) beside its default tools, and plain, which serves none.
func appsRegistry(t *testing.T, enabled bool, betaApp bool) *Registry {
	t.Helper()
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"))
	betaOpts := []mcptest.Option{}
	if betaApp {
		betaOpts = append(betaOpts, mcptest.WithApp("maps"))
	}
	beta := mcptest.StartServer(t, "beta", betaOpts...)
	plain := mcptest.StartServer(t, "plain")
	return newTestRegistry(t, Config{Apps: AppsConfig{Enabled: enabled}, Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: alpha.URL()}, {Name: "beta", URL: beta.URL()}, {Name: "plain", URL: plain.URL()},
	}}, Options{})
}

// toolByName returns the listed tool named name, nil when the list leaves it out.
func toolByName(t *testing.T, r *Registry, name string) map[string]any {
	t.Helper()
	for _, it := range listPage(t, r, ListRequest{Method: MethodToolsList}, "")["tools"].([]any) {
		if m := it.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

// The tools list links each app tool to its UI resource under the URI the gateway serves it at,
// in both forms the official helpers write; the resources list names the UI resource so, its
// mimeType and CSP untouched; and a read of that URI reaches the backend and comes back in the
// client's form.
func TestAppsLinksNamespaced(t *testing.T) {
	r := appsRegistry(t, false, false)
	const uri = "ui://alpha/weather/dashboard.html"
	show := toolByName(t, r, "alpha__"+mcptest.AppShowTool)
	if show == nil {
		t.Fatal("show tool not listed")
	}
	if got := mcptest.Path(show, "_meta", "ui", "resourceUri"); got != uri {
		t.Errorf("_meta.ui.resourceUri = %v, want %s", got, uri)
	}
	if got := mcptest.Path(show, "_meta", "ui/resourceUri"); got != uri {
		t.Errorf(`_meta["ui/resourceUri"] = %v, want %s`, got, uri)
	}
	// Switched off, visibility is the host's business: every tool is listed as the backend
	// declared it.
	refresh := toolByName(t, r, "alpha__"+mcptest.AppRefreshTool)
	if got := mcptest.Path(refresh, "_meta", "ui", "visibility"); !slices.Equal(toStrings(got), []string{"app"}) {
		t.Errorf("app-only tool: visibility %v", got)
	}
	var listed map[string]any
	for _, it := range listPage(t, r, ListRequest{Method: MethodResourcesList}, "")["resources"].([]any) {
		if m := it.(map[string]any); m["uri"] == uri {
			listed = m
		}
	}
	if listed == nil || listed["mimeType"] != mcptest.AppMIMEType ||
		mcptest.Path(listed, "_meta", "ui", "csp", "connectDomains", 0) != mcptest.AppConnectDomain {
		t.Fatalf("UI resource listed as %v", listed)
	}
	target, err := r.Resolve(KindResource, uri)
	if err != nil || target != (Target{Upstream: "alpha", Name: "ui://weather/dashboard.html"}) {
		t.Fatalf("Resolve(%s) = %+v, %v", uri, target, err)
	}
	res := callOnce(t, r, MethodResourcesRead, uri, KindResource, `{"_meta":`+upstreamstest.Meta+`,"uri":"`+uri+`"}`)
	item := mcptest.Path(res, "result", "contents", 0)
	if mcptest.Path(item, "uri") != uri || mcptest.Path(item, "mimeType") != mcptest.AppMIMEType ||
		mcptest.Path(item, "text") != mcptest.AppHTML ||
		mcptest.Path(item, "_meta", "ui", "csp", "resourceDomains", 0) != mcptest.AppResourceDomain {
		t.Fatalf("read: %v", res)
	}
	// A tools/call result naming the UI resource names it as the client reads it.
	res = callOnce(t, r, MethodToolsCall, "alpha__"+mcptest.AppShowTool, KindTool,
		`{"_meta":`+upstreamstest.Meta+`,"name":"alpha__`+mcptest.AppShowTool+`","arguments":{}}`)
	if got := mcptest.Path(res, "result", "_meta", "ui", "resourceUri"); got != uri {
		t.Fatalf("tools/call result names %v, want %s", got, uri)
	}
}

// Switched on, a tool only an app may call is out of the tools list and of tool search's
// catalog, and the backends' own names resolve only where exactly one backend serving apps has
// a tool of that name that apps may call.
func TestAppsVisibilityAndBackendNames(t *testing.T) {
	ctx := context.Background()
	r := appsRegistry(t, true, false)
	if toolByName(t, r, "alpha__"+mcptest.AppRefreshTool) != nil {
		t.Error("app-only tool listed to the model")
	}
	for _, name := range []string{mcptest.AppShowTool, mcptest.AppModelTool} {
		if toolByName(t, r, "alpha__"+name) == nil {
			t.Errorf("%s not listed", name)
		}
	}
	tc, err := r.ToolCatalog(ctx, &ListRequest{Params: []byte(`{"_meta":` + upstreamstest.Meta + `}`)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range tc.Tools() {
		if ct.Target.Name == mcptest.AppRefreshTool {
			t.Error("app-only tool in the search catalog")
		}
	}
	q := &ToolHeaderQuery{Fetch: true}
	hidden, err := r.ModelHidden(ctx, q, Target{Upstream: "alpha", Name: mcptest.AppRefreshTool})
	if err != nil || !hidden {
		t.Errorf("ModelHidden(refresh) = %v, %v", hidden, err)
	}
	if hidden, _ := r.ModelHidden(ctx, q, Target{Upstream: "alpha", Name: mcptest.AppShowTool}); hidden {
		t.Error("ModelHidden(show) = true")
	}
	for _, tt := range []struct {
		name string
		want Target
		err  error
	}{
		{mcptest.AppRefreshTool, Target{Upstream: "alpha", Name: mcptest.AppRefreshTool}, nil},
		{mcptest.AppShowTool, Target{Upstream: "alpha", Name: mcptest.AppShowTool}, nil},
		{mcptest.ToolEcho, Target{Upstream: "alpha", Name: mcptest.ToolEcho}, nil}, // only alpha serves apps
		{mcptest.AppModelTool, Target{}, ErrUnknownName},                           // visibility ["model"]
		{"no_such_tool", Target{}, ErrUnknownName},
	} {
		got, err := r.ResolveAppName(ctx, q, tt.name, nil)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("ResolveAppName(%s) = %+v, %v; want %+v, %v", tt.name, got, err, tt.want, tt.err)
		}
	}
	// Two backends serving apps with the same tool: never a guess.
	both := appsRegistry(t, true, true)
	for _, name := range []string{mcptest.AppRefreshTool, mcptest.ToolEcho} {
		if got, err := both.ResolveAppName(ctx, q, name, nil); !errors.Is(err, ErrAmbiguousAppName) {
			t.Errorf("two apps: ResolveAppName(%s) = %+v, %v; want ErrAmbiguousAppName", name, got, err)
		}
	}
}

// A backend whose list cannot be had makes a backend's own name unresolvable rather than routed
// to another backend that has it.
func TestAppsBackendNameFailsClosed(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"))
	r := newTestRegistry(t, Config{Apps: AppsConfig{Enabled: true}, Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: alpha.URL()}, {Name: "down", URL: "http://127.0.0.1:1/mcp"},
	}}, Options{})
	_, err := r.ResolveAppName(context.Background(), &ToolHeaderQuery{}, mcptest.AppRefreshTool, nil)
	if err == nil || errors.Is(err, ErrUnknownName) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("ResolveAppName with a backend down = %v, want ErrUnavailable", err)
	}
}

// A call naming no namespaced tool consults every backend's list; one whose list cannot be had
// is not asked again for such calls for a few seconds (per caller), which all fail closed, so
// a client cannot make the gateway send a failing backend a list request per call.
func TestAppsBackendNameFailureRemembered(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"))
	var asked atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	clock := newTestClock()
	r := newTestRegistry(t, Config{Apps: AppsConfig{Enabled: true}, Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: alpha.URL()},
		{Name: "down", URL: down.URL + "/mcp", Protocol: ProtocolVersion, Breaker: BreakerConfig{Failures: 1000}},
	}}, Options{Clock: clock.Now})
	resolve := func(caller string, calls int) int32 {
		t.Helper()
		before := asked.Load()
		for i := range calls {
			_, err := r.ResolveAppName(context.Background(), &ToolHeaderQuery{CacheKey: caller}, fmt.Sprint("tool_", i), nil)
			if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrUnknownName) {
				t.Fatalf("ResolveAppName with a backend down = %v, want ErrUnavailable", err)
			}
		}
		return asked.Load() - before
	}
	if n := resolve("iss#alice", 20); n == 0 || n > 3 {
		t.Fatalf("20 calls sent the failing backend %d requests, want one list request (and its retries)", n)
	}
	if n := resolve("iss#bob", 1); n == 0 {
		t.Error("another caller's call did not ask the backend")
	}
	clock.Advance(5*time.Second + time.Millisecond)
	if n := resolve("iss#alice", 3); n == 0 || n > 3 {
		t.Errorf("after the wait: %d requests, want one list request again", n)
	}
	if n := len(alpha.RequestsOf("tools/list")); n != 1 {
		t.Errorf("alpha was asked for its list %d times, want once", n)
	}
}

func toStrings(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// A backend that offers its UI tools only to hosts declaring the MCP Apps extension (as the
// specification says servers SHOULD) still shows them to the gateway's own lists, which route the
// apps' calls and make the pins: the gateway declares the extension when apps are on.
func TestAppsIndexDeclaresTheExtension(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"))
	var declared []bool
	uiToolsOnlyFor(alpha, func(req mcp.Request) bool {
		caps, _ := json.Marshal(req.GetParams().GetMeta()["io.modelcontextprotocol/clientCapabilities"])
		ui := strings.Contains(string(caps), `"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}`)
		declared = append(declared, ui)
		return ui
	})
	r := newTestRegistry(t, Config{Apps: AppsConfig{Enabled: true}, Upstreams: []UpstreamConfig{{Name: "alpha", URL: alpha.URL()}}}, Options{})
	got, err := r.ResolveAppName(context.Background(), &ToolHeaderQuery{}, mcptest.AppRefreshTool, nil)
	if err != nil || got.Upstream != "alpha" || !slices.Equal(declared, []bool{true}) {
		t.Fatalf("ResolveAppName = %+v, %v; the backend saw the extension declared: %v", got, err, declared)
	}
	// What 'gateway pins write' pins is what the routing and the hosts see: the UI tools too.
	defs, err := r.Definitions(context.Background(), "alpha")
	if err != nil || !slices.ContainsFunc(defs.Tools, func(d json.RawMessage) bool { return strings.Contains(string(d), mcptest.AppRefreshTool) }) ||
		len(defs.UIResources) != 1 {
		t.Fatalf("Definitions: %v, %d tools, UI resources %s", err, len(defs.Tools), defs.UIResources)
	}
}

// A pre-2026 backend learns the host supports apps only from initialize: with apps on the
// gateway's sessions declare the extension there, so a backend that offers UI tools only to such
// hosts shows them, and an app's own name resolves to it.
func TestAppsLegacyBackendSeesTheExtension(t *testing.T) {
	for _, on := range []bool{false, true} {
		old := mcptest.StartLegacyServer(t, "old", mcptest.WithApp("weather"))
		uiToolsOnlyFor(old, func(req mcp.Request) bool {
			ss, _ := req.GetSession().(*mcp.ServerSession)
			return ss != nil && ss.InitializeParams() != nil && ss.InitializeParams().Capabilities.Extensions["io.modelcontextprotocol/ui"] != nil
		})
		r := newTestRegistry(t, Config{Apps: AppsConfig{Enabled: on}, Upstreams: []UpstreamConfig{{Name: "old", URL: old.URL()}}}, Options{})
		got, err := r.ResolveAppName(context.Background(), &ToolHeaderQuery{}, mcptest.AppRefreshTool, nil)
		if on && (err != nil || got.Upstream != "old") || !on && !errors.Is(err, ErrUnknownName) {
			t.Errorf("apps %v: ResolveAppName = %+v, %v", on, got, err)
		}
	}
}

// uiToolsOnlyFor makes srv list its UI tools (those with _meta.ui) only to the tools/list
// requests declared accepts, as a server that checks the client's MCP Apps capability does.
func uiToolsOnlyFor(srv *mcptest.Server, declared func(mcp.Request) bool) {
	srv.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			lt, ok := res.(*mcp.ListToolsResult)
			if method != "tools/list" || !ok || err != nil {
				return res, err
			}
			if !declared(req) {
				lt.Tools = slices.DeleteFunc(lt.Tools, func(tl *mcp.Tool) bool { return tl.Meta["ui"] != nil })
			}
			return lt, nil
		}
	})
}
