package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestPublicDocumentsAnswerEveryMethod: every document the MCP listener serves to anyone (the
// protected resource metadata of the endpoint, of the host's root and of a tool set; the Server
// Cards; the AI Catalog) answers HEAD as GET without the body, a CORS preflight with the CORS
// headers its GET carries (the metadata's allowing MCP-Protocol-Version, which MCP clients send
// when they fetch it, as the TypeScript SDK does), and every other method with 405 and
// "Allow: GET, HEAD, OPTIONS". Before, the metadata answered HEAD with 405 and its preflight
// with a 204 that granted no origin, and a card answered TRACE with an Allow of the methods it
// refuses. Two replicas of one configuration serve the same bytes under the same ETag.
func TestPublicDocumentsAnswerEveryMethod(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	cfg := func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "use", Upstream: "alpha", AnyScope: []string{"tools:use"}}}
		c.Server.ServerCard = mcphttp.ServerCardConfig{Enabled: true, AICatalog: true}
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "narrow", Include: []mcphttp.SelectorConfig{{Upstream: "alpha", Tools: []string{"echo"}}}}}
	}
	base, other := "http://"+startTestGateway(t, cfg, alpha).MCP, "http://"+startTestGateway(t, cfg, alpha).MCP
	metadata := map[string]bool{
		"/.well-known/oauth-protected-resource/mcp": true, "/.well-known/oauth-protected-resource": true,
		"/.well-known/oauth-protected-resource/mcp/narrow": true,
		"/mcp/server-card": false, "/mcp/narrow/server-card": false, mcphttp.CatalogPath: false,
	}
	for path, isMetadata := range metadata {
		status, h, body := exchange(t, http.MethodGet, base+path, http.Header{}, "")
		if status != http.StatusOK || body == "" || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("ETag") == "" {
			t.Fatalf("GET %s: %d %v %s", path, status, h, body)
		}
		if _, oh, ob := exchange(t, http.MethodGet, other+path, http.Header{}, ""); ob != body || oh.Get("ETag") != h.Get("ETag") {
			t.Errorf("%s: another replica serves %s %s, this one %s %s", path, oh.Get("ETag"), ob, h.Get("ETag"), body)
		}
		if status, hh, body := exchange(t, http.MethodHead, base+path, http.Header{}, ""); status != http.StatusOK || body != "" ||
			hh.Get("Content-Type") != h.Get("Content-Type") || hh.Get("ETag") != h.Get("ETag") || hh.Get("Cache-Control") != h.Get("Cache-Control") {
			t.Errorf("HEAD %s: %d %v %q; GET had %v", path, status, hh, body, h)
		}
		asked := "if-none-match"
		if isMetadata {
			asked = "mcp-protocol-version"
		}
		status, ph, _ := exchange(t, http.MethodOptions, base+path, http.Header{"Origin": {"https://app.example"},
			"Access-Control-Request-Method": {"GET"}, "Access-Control-Request-Headers": {asked}}, "")
		if status != http.StatusNoContent || ph.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(ph.Get("Access-Control-Allow-Methods"), "GET") ||
			!strings.Contains(strings.ToLower(ph.Get("Access-Control-Allow-Headers")), asked) {
			t.Errorf("preflight of %s asking for %s: %d %v", path, asked, status, ph)
		}
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodTrace, "BREW"} {
			status, h, _ := exchange(t, method, base+path, http.Header{"Content-Type": {"application/json"}}, "{}")
			if status != http.StatusMethodNotAllowed || h.Get("Allow") != "GET, HEAD, OPTIONS" {
				t.Errorf("%s %s: %d, Allow %q", method, path, status, h.Get("Allow"))
			}
		}
	}
}
