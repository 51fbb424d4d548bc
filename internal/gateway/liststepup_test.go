package gateway

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// listedTools returns each tool a client lists with the scopes its _meta says a call needs
// (nil when unmarked).
func listedTools(t *testing.T, cs *mcp.ClientSession) map[string]any {
	t.Helper()
	out := map[string]any{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = tool.Meta[upstreams.RequiredScopesMeta]
	}
	return out
}

// TestListWithoutScopes: a rule's listWithoutScopes lists the tools a caller lacks scopes for,
// marked with the scopes a call needs, in both eras, while the call itself stays 403
// insufficient_scope; without the opt-in they are hidden, as is everything no scope could grant
// (deny rules, unmet claims, no rule) and everything a tool set does not select.
func TestListWithoutScopes(t *testing.T) {
	// Both serve pre-2026 clients, as a configuration file's gateway does by default (newConfig).
	plain := startAuthGateway(t)
	optIn := startAuthGatewayWith(t, func(c *Config) {
		c.Auth.Policy.Rules[2].ListWithoutScopes = true // write: alpha progress, needs tools:write
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "echo-only", Include: []mcphttp.SelectorConfig{{Upstream: "alpha", Tools: []string{"echo"}}}}}
	})
	marked := []any{"tools:write"}
	tests := []struct {
		name   string
		f      *authFixture
		path   string
		claims devissuer.Claims
		want   map[string]any
	}{
		{"without the opt-in", plain, "/mcp", devissuer.Claims{"sub": "reader", "scope": "tools:read"},
			map[string]any{"alpha__add": nil, "alpha__echo": nil}},
		{"with the opt-in", optIn, "/mcp", devissuer.Claims{"sub": "reader", "scope": "tools:read"},
			map[string]any{"alpha__add": nil, "alpha__echo": nil, "alpha__progress": marked}},
		{"granted: unmarked", optIn, "/mcp", devissuer.Claims{"sub": "writer", "scope": "tools:read tools:write"},
			map[string]any{"alpha__add": nil, "alpha__echo": nil, "alpha__progress": nil}},
		{"a set never widens", optIn, "/mcp/echo-only", devissuer.Claims{"sub": "reader", "scope": "tools:read"},
			map[string]any{"alpha__echo": nil}},
	}
	for _, tt := range tests {
		tok := tt.f.token(t, tt.claims)
		url := "http://" + tt.f.gw.MCP + tt.path
		for _, version := range []string{"2026-07-28", "2025-11-25"} {
			t.Run(tt.name+"/"+version, func(t *testing.T) {
				opts := []mcptest.ClientOption{mcptest.WithBearer(tok)}
				if version != "2026-07-28" {
					opts = append(opts, mcptest.WithProtocolVersion(version))
				}
				cs := mcptest.Connect(t, url, opts...)
				if got := listedTools(t, cs); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("tools/list = %v, want %v", got, tt.want)
				}
				if _, listed := tt.want["alpha__progress"]; !listed || tt.want["alpha__progress"] == nil {
					return
				}
				tt.f.alpha.Reset()
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__progress", Arguments: map[string]any{"steps": 1}})
				// The go-sdk reports the status text of the 403 and the body's message.
				if err == nil || !strings.Contains(err.Error(), "Forbidden: insufficient scope") {
					t.Errorf("calling a listed, marked tool: %v, want the 403 step-up", err)
				}
				if n := toolCalls(tt.f.alpha); n != 0 {
					t.Errorf("the backend received %d calls", n)
				}
			})
		}
	}
	t.Run("raw exchange", func(t *testing.T) {
		h := modernHeaders("tools/list", "")
		h.Set("Authorization", "Bearer "+optIn.token(t, devissuer.Claims{"sub": "reader", "scope": "tools:read"}))
		status, _, body := post(t, optIn.url(), h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`)
		var res struct {
			Result struct {
				CacheScope string `json:"cacheScope"`
				Tools      []struct {
					Name string         `json:"name"`
					Meta map[string]any `json:"_meta"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &res); err != nil || status != 200 || res.Result.CacheScope != "private" {
			t.Fatalf("status %d, cacheScope %q: %s", status, res.Result.CacheScope, body)
		}
		i := slices.IndexFunc(res.Result.Tools, func(tl struct {
			Name string         `json:"name"`
			Meta map[string]any `json:"_meta"`
		}) bool {
			return tl.Name == "alpha__progress"
		})
		if i < 0 || !reflect.DeepEqual(res.Result.Tools[i].Meta[upstreams.RequiredScopesMeta], marked) {
			t.Fatalf("alpha__progress not listed with its scopes: %s", body)
		}
		h = modernHeaders("tools/call", "alpha__progress")
		h.Set("Authorization", "Bearer "+optIn.token(t, devissuer.Claims{"sub": "reader", "scope": "tools:read"}))
		status, hdr, body := post(t, optIn.url(), h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{`+testMeta+`,"name":"alpha__progress","arguments":{"steps":1}}}`)
		if ch := hdr.Get("WWW-Authenticate"); status != 403 || !strings.Contains(ch, `error="insufficient_scope", scope="tools:write"`) {
			t.Fatalf("call: status %d, challenge %q: %s", status, ch, body)
		}
	})
}
