package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestSetIsABoundary: a tool set is a boundary for everything it serves, in both eras. A token
// minted for a set's endpoint opens no other endpoint for a pre-2026 client either: initialize,
// logging/setLevel and resources/subscribe on /mcp are refused with the 401 every 2026-07-28
// request gets. The server instructions of a backend the set selects nothing from are served on
// the set's endpoint neither in server/discover nor in a pre-2026 client's initialize. Before,
// the audience was checked only on the 2026-07-28 path, after admission, and a set's
// instructions fell back to every backend's.
func TestSetIsABoundary(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithInstructions("alpha notes"))
	beta := mcptest.StartServer(t, "beta", mcptest.WithInstructions("beta secrets"))
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "*", Tools: []string{"*"}, Resources: []string{"**"}, AnyScope: []string{"tools:use"}}}
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "alpha-only", Include: []mcphttp.SelectorConfig{{Upstream: "alpha"}}}}
	}, alpha, beta)
	base := "http://" + gw.MCP
	setTok := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use",
		"aud": strings.TrimSuffix(testResource, "/mcp") + "/mcp/alpha-only"})

	t.Run("a set's token on /mcp", func(t *testing.T) {
		raw := &legacyclient.Raw{Token: setTok}
		init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
		if r := raw.Post(t, base+"/mcp", "", init); r.Status != http.StatusUnauthorized {
			t.Errorf("initialize on /mcp with alpha-only's token: %s, want 401", r)
		}
		sid := raw.Initialize(t, base+"/mcp/alpha-only")
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`,
			`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"beta+mem://readme"}}`,
			`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		} {
			if r := raw.Post(t, base+"/mcp", sid, body); r.Status != http.StatusUnauthorized {
				t.Errorf("%s on /mcp with alpha-only's token: %s, want 401", body, r)
			}
		}
	})
	t.Run("instructions", func(t *testing.T) {
		tok := mintFor(t, iss, "alice")
		h := modernHeaders("server/discover", "")
		h.Set("Authorization", "Bearer "+tok)
		_, _, body := post(t, base+"/mcp/alpha-only", h, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+testMeta+`}}`)
		if !strings.Contains(body, "alpha notes") || strings.Contains(body, "beta secrets") {
			t.Errorf("discover on alpha-only: %s", body)
		}
		raw := &legacyclient.Raw{Token: tok}
		r := raw.Post(t, base+"/mcp/alpha-only", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
		if r.Status != http.StatusOK || !strings.Contains(r.Body, "alpha notes") || strings.Contains(r.Body, "beta secrets") {
			t.Errorf("a pre-2026 initialize on alpha-only: %s", r)
		}
		_, _, body = post(t, base+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+testMeta+`}}`)
		if !strings.Contains(body, "alpha notes") || !strings.Contains(body, "beta secrets") {
			t.Errorf("discover on /mcp names every backend's instructions: %s", body)
		}
	})
}

// TestLegacyMirroredHeadersChecked: a pre-2026 client owes the gateway no Mcp-Method or Mcp-Name
// header, but one it sends must agree with the body, whatever MCP-Protocol-Version it names:
// something between it and the gateway may route on them. A contradiction is an HTTP 400
// (-32020) and nothing reaches a backend. Before, a 2025 version header made them go
// unchecked.
func TestLegacyMirroredHeadersChecked(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	iss := newIssuer(t)
	gw := legacyGateway(t, iss, nil, alpha)
	raw := &legacyclient.Raw{Token: mintFor(t, iss, "alice")}
	sid := raw.Initialize(t, gw.url())
	call := raw.CallBody("alpha__echo", "hi")
	for _, tt := range []struct {
		name  string
		h     http.Header
		agree bool
	}{
		{"Mcp-Method of another method", http.Header{"Mcp-Method": {"tools/list"}}, false},
		{"Mcp-Name of another tool", http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"alpha__add"}}, false},
		{"Mcp-Name of another tool, base64", http.Header{"Mcp-Name": {"=?base64?YWxwaGFfX2FkZA==?="}}, false},
		{"Mcp-Name twice", http.Header{"Mcp-Name": {"alpha__echo", "alpha__add"}}, false},
		{"headers that agree", http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"alpha__echo"}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			alpha.Reset()
			c := &legacyclient.Raw{Token: raw.Token, Header: tt.h}
			r := c.Post(t, gw.url(), sid, call)
			if tt.agree {
				if r.Status != http.StatusOK || legacyclient.ResultText(r.Msgs) != "hi" {
					t.Errorf("%s", r)
				}
				return
			}
			if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "-32020") {
				t.Errorf("%s, want 400 -32020", r)
			}
			if n := toolCalls(alpha); n != 0 {
				t.Errorf("the backend got %d calls", n)
			}
		})
	}
}

// TestLegacyHiddenToolAsksNoBackend: a pre-2026 client's call of a tool its policy hides is
// answered like an unknown tool and reaches its backend in no way: no call and no tools/list
// fetched on its behalf. Before, the edge fetched the backend's list to synthesise headers
// before the call was authorized.
func TestLegacyHiddenToolAsksNoBackend(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	iss := newIssuer(t)
	gw := legacyGateway(t, iss, func(c *Config) {
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "echo", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}}}
		c.HealthInterval = 0
	}, alpha)
	raw := &legacyclient.Raw{Token: mintFor(t, iss, "bob")}
	sid := raw.Initialize(t, gw.url())
	alpha.Reset()
	r := raw.Post(t, gw.url(), sid, raw.CallArgs("alpha__region", `{"region":"eu"}`))
	if r.Status != http.StatusOK || !strings.Contains(r.Body, "unknown tool") {
		t.Errorf("a hidden tool: %s", r)
	}
	for _, ex := range alpha.Requests() {
		t.Errorf("the backend was asked %s for a hidden tool's call", ex.Header.Get("Mcp-Method"))
	}
}
