package pre2026

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestAppsOwnNamesNotFrom20250326: a 2025-03-26 client is sent no tool's _meta, so it renders
// no MCP App, and a backend's own tool name it sends is no app's call: it is an unknown tool,
// alone, in a batch and without a session, and the app-only tool it names is never run. Its
// namespaced tools and the UI resource stay as for any client, and a 2025-11-25 client's own
// name is still routed (it may host the app).
func TestAppsOwnNamesNotFrom20250326(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithApp("weather"))
	ucfg := upstreams.Config{Apps: upstreams.AppsConfig{Enabled: true}, Upstreams: []upstreams.UpstreamConfig{{Name: "alpha", URL: alpha.URL()}}}
	_, h := testServer(t, gwSpec{}, ucfg)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	url := hs.URL + mcphttp.DefaultPath
	sid, _ := legacyInit(t, url, "2025-03-26", `{}`)
	alpha.Reset()
	const unknownOwnTool = `Invalid params: unknown tool "` + mcptest.AppRefreshTool + `": tools are named <backend>__<tool>`
	own := rpc(1, "tools/call", `{"name":"`+mcptest.AppRefreshTool+`","arguments":{}}`)
	unknown := func(where string, m jsonrpc.Message) {
		t.Helper()
		if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams || m.Error.Message != unknownOwnTool {
			t.Errorf("%s: %+v %s, want the unknown tool", where, m.Error, m.Result)
		}
	}
	if r := do(t, "POST", url, legacyHeaders("", sid), own); r.RPC.Error == nil || r.RPC.Error.Message != unknownOwnTool {
		t.Errorf("alone: %d %s, want the unknown tool", r.Status, r.Body)
	}
	for where, sess := range map[string]string{"a batch of one": sid, "a batch without a session": ""} {
		r := do(t, "POST", url, legacyHeaders("", sess), "["+own+"]")
		unknown(where, batchMessages(t, r)["1"])
	}
	r := do(t, "POST", url, legacyHeaders("", sid), batchOf(own,
		rpc(2, "tools/call", `{"name":"alpha__`+mcptest.AppShowTool+`","arguments":{}}`),
		rpc(3, "resources/read", `{"uri":"ui://alpha/weather/dashboard.html"}`)))
	got := batchMessages(t, r)
	unknown("in a batch", got["1"])
	if m := got["2"]; m.Error != nil || !strings.Contains(string(m.Result), mcptest.AppShowTool+" of weather") {
		t.Errorf("namespaced call in the batch: %+v %s", m.Error, m.Result)
	}
	if m := got["3"]; m.Error != nil || !strings.Contains(string(m.Result), "ui://alpha/weather/dashboard.html") {
		t.Errorf("UI resource read in the batch: %+v %s", m.Error, m.Result)
	}
	for _, ex := range alpha.RequestsOf("tools/call") {
		if strings.Contains(string(ex.Body), mcptest.AppRefreshTool) {
			t.Errorf("the backend ran the app-only tool for a 2025-03-26 client: %s", ex.Body)
		}
	}
	sid1125, _ := legacyInit(t, url, "2025-11-25", `{}`)
	if r := do(t, "POST", url, legacyHeaders("2025-11-25", sid1125), own); r.RPC.Error != nil ||
		!strings.Contains(string(r.RPC.Result), mcptest.AppRefreshTool+" of weather") {
		t.Errorf("a 2025-11-25 client's own name: %d %s", r.Status, r.Body)
	}
}
