package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/testsupport/dpopclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestToolsetBehindPathPrefix: with the gateway published under a path prefix by a balancer that
// strips it (server.publicURL https://host/team-a/mcp, server.path /mcp), a tool set's public URL
// keeps the prefix. Its protected resource metadata names that URL, its challenge points at it,
// a DPoP-bound token issued for it (RFC 8707 resource) with a proof whose htu is it opens the set,
// and a proof for the URL without the prefix is refused. That holds for a set under server.path
// and for one at a path of its own.
func TestToolsetBehindPathPrefix(t *testing.T) {
	const public = "https://mcp.test.invalid/team-a/mcp"
	iss := newDPoPIssuer(t)
	dc := dpopclient.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Server.PublicURL = public
		c.Auth.DPoP.Mode = authz.DPoPRequired
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "use", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}}}
		c.Toolsets = []mcphttp.ToolsetConfig{
			{Name: "ro", Include: []mcphttp.SelectorConfig{{Upstream: "alpha"}}},
			{Name: "docs", Path: "/docs/mcp", Include: []mcphttp.SelectorConfig{{Upstream: "alpha"}}},
		}
	}, alpha)
	for _, tc := range []struct{ path, resource string }{
		{"/mcp/ro", "https://mcp.test.invalid/team-a/mcp/ro"},
		{"/docs/mcp", "https://mcp.test.invalid/team-a/docs/mcp"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rest := strings.TrimPrefix(tc.resource, "https://mcp.test.invalid")
			var md authz.ProtectedResourceMetadata
			if err := json.Unmarshal([]byte(get(t, "http://"+gw.MCP+"/.well-known/oauth-protected-resource"+rest)), &md); err != nil || md.Resource != tc.resource {
				t.Fatalf("metadata at the prefixed well-known URI: %+v %v, want resource %s", md, err, tc.resource)
			}
			u := "http://" + gw.MCP + tc.path
			status, h, _ := post(t, u, modernHeaders("tools/call", "alpha__echo"), dpopCallBody)
			want := `resource_metadata="https://mcp.test.invalid/.well-known/oauth-protected-resource` + rest + `"`
			if status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), want) {
				t.Fatalf("no token: %d %q, want %s", status, h.Get("WWW-Authenticate"), want)
			}
			caller := newDPoPCaller(t, dc, iss, tc.resource)
			if status, _, body := post(t, u, caller.headers("tools/call", "alpha__echo", caller.proof(t, http.MethodPost, tc.resource, nil)), dpopCallBody); status != http.StatusOK {
				t.Fatalf("the set's token with a proof for its public URL: %d %s", status, body)
			}
			unprefixed := "https://mcp.test.invalid" + tc.path
			status, h, _ = post(t, u, caller.headers("tools/call", "alpha__echo", caller.proof(t, http.MethodPost, unprefixed, nil)), dpopCallBody)
			wantDPoPRefusal(t, status, h, dpop.CodeInvalidProof)
		})
	}
}
