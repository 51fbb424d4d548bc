package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/dpopclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestEveryChallengeNamesScope: every WWW-Authenticate challenge the gateway writes, Bearer or
// DPoP, 400, 401 or 403, names resource_metadata and the scope a client should ask for (MCP
// authorization: scope SHOULD be present): DPoP proof and nonce failures and a bound token as
// Bearer name scopes_supported, a bearer call of a rule requiring DPoP names the rule's scopes,
// a token for another tool set's endpoint and a token in the query scopes_supported.
func TestEveryChallengeNamesScope(t *testing.T) {
	iss := newDPoPIssuer(t)
	dc := dpopclient.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.ResourceMetadata.ScopesSupported = []string{"tools:use"}
		c.Auth.DPoP.Mode = authz.DPoPAllowed
		c.Auth.DPoP.Nonce.Required = true
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "strong", Upstream: "alpha", Tools: []string{"add"}, AnyScope: []string{"tools:use"}, AllScopes: []string{"tools:strong"}, DPoP: authz.DPoPRequired},
			{ID: "use", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}},
		}
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "alpha-ro", Include: []mcphttp.SelectorConfig{{Upstream: "alpha", Tools: []string{"echo"}}}}}
		c.MRTR.Keys = testKeys
	}, alpha)
	base := "http://" + gw.MCP
	caller := newDPoPCaller(t, dc, iss, testResource)
	bearer := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use tools:strong"})
	setTok := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use",
		"aud": strings.TrimSuffix(testResource, "/mcp") + "/mcp/alpha-ro"})
	const supported, strong = `scope="tools:use"`, `scope="tools:strong tools:use"`
	withBearer := func(tok, method, name string) http.Header {
		h := modernHeaders(method, name)
		h.Set("Authorization", "Bearer "+tok)
		return h
	}
	addBody := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + testMeta + `,"name":"alpha__add","arguments":{"a":1,"b":2}}}`
	cases := []struct {
		name, url string
		h         http.Header
		body      string
		status    int
		code      string // the error parameter the challenge carries
		scope     string
	}{
		{"no token", base + "/mcp", modernHeaders("tools/call", "alpha__echo"), dpopCallBody, 401, "", supported},
		{"invalid_dpop_proof", base + "/mcp", caller.headers("tools/call", "alpha__echo", "not-a-proof"), dpopCallBody, 401, "invalid_dpop_proof", supported},
		{"use_dpop_nonce", base + "/mcp", caller.headers("tools/call", "alpha__echo", caller.proof(t, http.MethodPost, testResource, nil)), dpopCallBody, 401, "use_dpop_nonce", supported},
		{"bound token as Bearer", base + "/mcp", withBearer(caller.token, "tools/call", "alpha__echo"), dpopCallBody, 401, "invalid_token", supported},
		{"bearer where the rule requires DPoP", base + "/mcp", withBearer(bearer, "tools/call", "alpha__add"), addBody, 401, "invalid_token", strong},
		{"token for another endpoint", base + "/mcp", withBearer(setTok, "tools/call", "alpha__echo"), dpopCallBody, 401, "invalid_token", supported},
		{"token in the query", base + "/mcp?access_token=x", modernHeaders("tools/call", "alpha__echo"), dpopCallBody, 400, "invalid_request", supported},
		{"step-up", base + "/mcp", withBearer(mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use"}), "tools/call", "alpha__add"), addBody, 403, "insufficient_scope", strong},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := post(t, tc.url, tc.h, tc.body)
			lines := h.Values("WWW-Authenticate")
			if status != tc.status || len(lines) == 0 {
				t.Fatalf("status %d, challenges %q: want %d with challenges (%s)", status, lines, tc.status, body)
			}
			if tc.code != "" && !strings.Contains(lines[0], `error="`+tc.code+`"`) {
				t.Fatalf("challenge %q: want error %q", lines[0], tc.code)
			}
			for _, l := range lines {
				if !strings.Contains(l, `resource_metadata="https://mcp.test.invalid/.well-known/oauth-protected-resource/mcp"`) || !strings.Contains(l, tc.scope) {
					t.Errorf("challenge %q: want resource_metadata and %s", l, tc.scope)
				}
			}
		})
	}
}
