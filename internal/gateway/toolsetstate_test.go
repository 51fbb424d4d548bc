package gateway

import (
	"encoding/json"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestConfirmationStateAcrossEndpoints: a requestState answers only the call it asked on a path
// that serves that call. A confirmation of alpha__echo asked on the default endpoint or on a set
// that has the tool, answered on a set that leaves the tool out, runs nothing there (the set is
// checked before the state is opened); answered where the tool is served (the same call under the
// same policy: a set is a view, not a grant) it runs once, and its replay on any path is refused.
func TestConfirmationStateAcrossEndpoints(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "echo-confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			{ID: "alpha", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}},
		}
		c.Toolsets = []mcphttp.ToolsetConfig{
			{Name: "echo", Include: []mcphttp.SelectorConfig{{Upstream: "alpha", Tools: []string{"echo"}}}},
			{Name: "noecho", Include: []mcphttp.SelectorConfig{{Upstream: "alpha"}},
				Exclude: []mcphttp.SelectorConfig{{Upstream: "alpha", Tools: []string{"echo"}}}},
		}
	}, alpha)
	tok := mintFor(t, iss, "alice")
	call := func(path, retry string) urlAsk {
		h := modernHeaders("tools/call", "alpha__echo")
		h.Set("Authorization", "Bearer "+tok)
		_, _, body := post(t, "http://"+gw.MCP+path, h,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+elicitMeta+`,"name":"alpha__echo","arguments":{"text":"x"}`+retry+`}}`)
		var r urlAsk
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("%s %s: %v", path, body, err)
		}
		return r
	}
	calls := 0
	for _, c := range []struct{ asked, answered string }{{"/mcp", "/mcp/echo"}, {"/mcp/echo", "/mcp"}} {
		asked := call(c.asked, "")
		if asked.Result.ResultType != "input_required" || asked.Result.RequestState == "" {
			t.Fatalf("asked on %s: %+v", c.asked, asked)
		}
		if r := call("/mcp/noecho", approve(asked.Result.RequestState)); r.Error == nil || r.Result.ResultType != "" {
			t.Errorf("asked on %s, answered on a set without the tool: %+v", c.asked, r)
		}
		if n := toolCalls(alpha); n != calls {
			t.Fatalf("asked on %s: the backend received %d calls, want %d", c.asked, n, calls)
		}
		if r := call(c.answered, approve(asked.Result.RequestState)); r.Error != nil || len(r.Result.Content) == 0 || r.Result.Content[0].Text != "x" {
			t.Errorf("asked on %s, answered on %s: %+v", c.asked, c.answered, r)
		}
		calls++
		for _, replay := range []string{"/mcp", "/mcp/echo", "/mcp/noecho"} {
			if r := call(replay, approve(asked.Result.RequestState)); r.Error == nil {
				t.Errorf("asked on %s, replayed on %s: %+v", c.asked, replay, r)
			}
		}
		if n := toolCalls(alpha); n != calls {
			t.Fatalf("asked on %s: the backend received %d calls, want %d", c.asked, n, calls)
		}
	}
}
