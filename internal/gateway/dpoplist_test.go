package gateway

import (
	"slices"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/dpopclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestDPoPToolsHiddenFromBearer: a tool whose rule requires DPoP (dpop: required) is listed only
// to a caller who presents a DPoP-bound token with its proof, as lists show exactly what a call
// allows: a bearer caller, whose call would be refused (401 invalid_token), does not see it in
// tools/list, in either era, nor among find_tools' results on a search endpoint; a DPoP caller
// sees it everywhere.
func TestDPoPToolsHiddenFromBearer(t *testing.T) {
	iss := newDPoPIssuer(t)
	dc := dpopclient.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.DPoP.Mode = authz.DPoPAllowed
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "strong", Upstream: "alpha", Tools: []string{"add"}, AnyScope: []string{"tools:use"}, DPoP: authz.DPoPRequired},
			{ID: "use", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}},
		}
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "search", Include: []mcphttp.SelectorConfig{{}}, Search: mcphttp.SearchConfig{Enabled: true}}}
		c.MRTR.Keys = testKeys
	}, alpha)
	base := "http://" + gw.MCP + "/mcp"
	bearer, typ := requestToken(t, iss, testResource, "")
	if typ != "Bearer" {
		t.Fatalf("token_type %q without a proof", typ)
	}
	caller := newDPoPCaller(t, dc, iss, testResource)
	for _, version := range []string{"2026-07-28", "2025-11-25", "2025-03-26"} {
		opts := func(o ...mcptest.ClientOption) []mcptest.ClientOption {
			if version != "2026-07-28" {
				o = append(o, mcptest.WithProtocolVersion(version))
			}
			return o
		}
		t.Run("bearer "+version, func(t *testing.T) {
			cs := mcptest.Connect(t, base, opts(mcptest.WithBearer(bearer))...)
			if got := toolNames(t, cs); !slices.Contains(got, "alpha__echo") || slices.Contains(got, "alpha__add") {
				t.Errorf("a bearer caller's tools/list: %v, want alpha__echo and not alpha__add", got)
			}
			if version == "2025-03-26" {
				return // find_tools' results are structured content, which 2025-03-26 does not carry
			}
			cs = mcptest.Connect(t, base+"/search", opts(mcptest.WithBearer(bearer))...)
			if got := findTools(t, cs, "sum two integers"); slices.Contains(got, "alpha__add") {
				t.Errorf("find_tools returned alpha__add to a bearer caller: %v", got)
			}
		})
		t.Run("dpop "+version, func(t *testing.T) {
			cs := mcptest.Connect(t, base, opts(mcptest.WithRoundTripper(newDPoPTransport(t, caller)))...)
			if got := toolNames(t, cs); !slices.Contains(got, "alpha__add") {
				t.Errorf("a DPoP caller's tools/list: %v, want alpha__add", got)
			}
			if version == "2025-03-26" {
				return // as above
			}
			tr := newDPoPTransport(t, caller)
			tr.htu = testResource + "/search"
			cs = mcptest.Connect(t, base+"/search", opts(mcptest.WithRoundTripper(tr))...)
			if got := findTools(t, cs, "sum two integers"); len(got) == 0 || got[0] != "alpha__add" {
				t.Errorf("find_tools for a DPoP caller: %v, want alpha__add first", got)
			}
		})
	}
}
