package gateway

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestPublicURLSpelledOtherwise: a client asks its issuer for a token for the resource the
// protected resource metadata names, as a WHATWG URL parser spells it (the TypeScript SDK sends
// new URL(resource).href): scheme and host in lower case, without the default port, "/" for an
// empty path. A server.publicURL written otherwise names the same resource, and the token the
// client gets for it is the gateway's, on the default endpoint and, for a set's resource, on
// that set's; a set's token still opens no other endpoint, and a spelling no client produces
// (the host in upper case where the configuration has it in lower case) is still refused.
func TestPublicURLSpelledOtherwise(t *testing.T) {
	iss := newDPoPIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	for _, tt := range []struct{ public, canonical string }{
		{"https://mcp.test.invalid:443/mcp", "https://mcp.test.invalid/mcp"},
		{"https://MCP.Test.Invalid/mcp", "https://mcp.test.invalid/mcp"},
		{"HTTPS://mcp.test.invalid:/mcp", "https://mcp.test.invalid/mcp"},
		{"http://mcp.test.invalid:80/mcp", "http://mcp.test.invalid/mcp"},
	} {
		t.Run(tt.public, func(t *testing.T) {
			_, list := audienceGateway(t, iss, alpha, func(c *Config) {
				c.Server.PublicURL = tt.public
				c.Toolsets = []mcphttp.ToolsetConfig{{Name: "ro", Include: []mcphttp.SelectorConfig{{Upstream: "alpha"}}}}
			})
			gateway, _ := requestToken(t, iss, tt.canonical, "")
			set, _ := requestToken(t, iss, tt.canonical+"/ro", "")
			configured, _ := requestToken(t, iss, tt.public, "")
			for _, c := range []struct {
				name, path, tok string
				want            int
			}{
				{"the gateway's token", "/mcp", gateway, http.StatusOK},
				{"the gateway's token on the set", "/mcp/ro", gateway, http.StatusOK},
				{"the set's token on the set", "/mcp/ro", set, http.StatusOK},
				{"the set's token on the gateway", "/mcp", set, http.StatusUnauthorized},
				{"a token for the configured spelling", "/mcp", configured, http.StatusOK},
			} {
				if got := list(c.path, c.tok); got != c.want {
					t.Errorf("%s (%s): %d, want %d", c.name, c.path, got, c.want)
				}
			}
			upper, _ := requestToken(t, iss, "https://MCP.TEST.INVALID/mcp", "")
			if got := list("/mcp", upper); got != http.StatusUnauthorized {
				t.Errorf("a token for a spelling no client produces: %d, want 401", got)
			}
		})
	}
}

// TestMetadataResourceIsAnAudience: with auth.resourceMetadata.resource set, the metadata
// document tells clients to ask for tokens for that resource (RFC 9728 §2), and a client does,
// as a WHATWG URL parser spells it; an issuer that lists no audiences accepts such a token as it
// accepts one for server.publicURL, while a token for another resource stays refused.
func TestMetadataResourceIsAnAudience(t *testing.T) {
	iss := newDPoPIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	for _, tt := range []struct{ resource, asked string }{
		{"https://mcp.test.invalid", "https://mcp.test.invalid/"},
		{"https://mcp.test.invalid/", "https://mcp.test.invalid/"},
		{"https://MCP.test.invalid:443/", "https://mcp.test.invalid/"},
	} {
		t.Run(tt.resource, func(t *testing.T) {
			gw, list := audienceGateway(t, iss, alpha, func(c *Config) { c.Auth.ResourceMetadata.Resource = tt.resource })
			var doc authz.ProtectedResourceMetadata
			if err := json.Unmarshal([]byte(get(t, "http://"+gw.MCP+"/.well-known/oauth-protected-resource")), &doc); err != nil || doc.Resource != tt.resource {
				t.Fatalf("metadata resource %q (%v), want %q", doc.Resource, err, tt.resource)
			}
			for _, c := range []struct {
				aud  string
				want int
			}{
				{tt.asked, http.StatusOK},
				{tt.resource, http.StatusOK},
				{testResource, http.StatusOK},
				{"https://other.test.invalid/", http.StatusUnauthorized},
			} {
				tok, _ := requestToken(t, iss, c.aud, "")
				if got := list("/mcp", tok); got != c.want {
					t.Errorf("a token for %s: %d, want %d", c.aud, got, c.want)
				}
			}
		})
	}
}

// audienceGateway fronts alpha with authentication by iss, whose tokens with the scope tools:use
// may use every alpha tool, and mutate's changes; list is the status of a tools/list with tok as
// Bearer at path.
func audienceGateway(t *testing.T, iss *devissuer.Issuer, alpha *mcptest.Server, mutate func(*Config)) (gw Listeners, list func(path, tok string) int) {
	t.Helper()
	gw = startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "use", Upstream: "alpha", AnyScope: []string{"tools:use"}}}
		mutate(c)
	}, alpha)
	return gw, func(path, tok string) int {
		h := modernHeaders("tools/list", "")
		h.Set("Authorization", "Bearer "+tok)
		status, _, _ := post(t, "http://"+gw.MCP+path, h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`)
		return status
	}
}
