package gateway

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestSearchShowsTheListView: find_tools answers over exactly what the caller's tools/list
// shows. A tool a rule lists without the scopes a call needs (listWithoutScopes) is found, marked
// with those scopes as the list marks it; without the opt-in it is found by no one who lacks them.
func TestSearchShowsTheListView(t *testing.T) {
	search := func(c *Config) {
		c.Server.Search = mcphttp.SearchConfig{Enabled: true, AlwaysVisible: []string{"alpha__progress"}}
	}
	plain := startAuthGatewayWith(t, search)
	optIn := startAuthGatewayWith(t, func(c *Config) {
		search(c)
		c.Auth.Policy.Rules[2].ListWithoutScopes = true // write: alpha progress, needs tools:write
	})
	reader := devissuer.Claims{"sub": "reader", "scope": "tools:read"}
	for _, tt := range []struct {
		name string
		f    *authFixture
		want any // the scopes alpha__progress is marked with; nil: not found
	}{
		{"without the opt-in", plain, nil},
		{"with the opt-in", optIn, []any{"tools:write"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := modernHeaders("tools/call", "find_tools")
			h.Set("Authorization", "Bearer "+tt.f.token(t, reader))
			status, _, body := post(t, tt.f.url(), h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+testMeta+
				`,"name":"find_tools","arguments":{"query":"send progress notifications in steps"}}}`)
			var res struct {
				Result struct {
					StructuredContent struct {
						Tools []struct {
							Name string         `json:"name"`
							Meta map[string]any `json:"_meta"`
						} `json:"tools"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(body), &res); err != nil || status != 200 {
				t.Fatalf("find_tools: %d %s", status, body)
			}
			var got any
			found := false
			for _, tl := range res.Result.StructuredContent.Tools {
				if tl.Name == "alpha__progress" {
					found, got = true, tl.Meta[upstreams.RequiredScopesMeta]
				}
			}
			if found != (tt.want != nil) || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("find_tools found alpha__progress: %v, marked %v; want marked %v\n%s", found, got, tt.want, body)
			}
			// The search-mode tools/list shows it the same way through alwaysVisible.
			h = modernHeaders("tools/list", "")
			h.Set("Authorization", "Bearer "+tt.f.token(t, reader))
			_, _, body = post(t, tt.f.url(), h, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+testMeta+`}}`)
			var list struct {
				Result struct {
					Tools []struct {
						Name string         `json:"name"`
						Meta map[string]any `json:"_meta"`
					} `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(body), &list); err != nil {
				t.Fatal(err)
			}
			got, found = nil, false
			for _, tl := range list.Result.Tools {
				if tl.Name == "alpha__progress" {
					found, got = true, tl.Meta[upstreams.RequiredScopesMeta]
				}
			}
			if found != (tt.want != nil) || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("search-mode tools/list: alpha__progress listed %v, marked %v; want marked %v\n%s", found, got, tt.want, body)
			}
		})
	}
}
