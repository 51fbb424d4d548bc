package gateway

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestClientTokenReachesNoBackend: the caller's token reaches no backend on any path the
// gateway has, whichever era the client speaks and whichever era the backend: lists (fanned
// out), calls, resources and prompts, through a 2026-07-28 backend and through the bridge to a
// 2025-11-25 one, for a client of each era the edge serves. Neither the token nor its signature
// (the part a re-encoding would keep) is in any header or body a backend received.
func TestClientTokenReachesNoBackend(t *testing.T) {
	iss := newIssuer(t)
	modern, legacy := mcptest.StartServer(t, "alpha"), mcptest.StartLegacyServer(t, "beta")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "*"}}
	}, modern, legacy)
	token := mint(t, iss, devissuer.Claims{"sub": "alice", "groups": []string{"sre"}})
	signature := token[strings.LastIndexByte(token, '.')+1:]
	url := "http://" + gw.MCP + "/mcp"
	for _, version := range []string{"", "2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run("client "+version, func(t *testing.T) {
			opts := []mcptest.ClientOption{mcptest.WithBearer(token)}
			if version != "" {
				opts = append(opts, mcptest.WithProtocolVersion(version))
			}
			cs := mcptest.Connect(t, url, opts...)
			if names := toolNames(t, cs); !contains(names, "alpha__echo") || !contains(names, "beta__echo") {
				t.Fatalf("tools/list: %v", names)
			}
			for _, name := range []string{"alpha__echo", "beta__echo", "alpha__echo", "beta__echo"} {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "hi"}})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %+v", name, err, res)
				}
			}
			_, _ = cs.ListResources(t.Context(), nil)
			_, _ = cs.ListPrompts(t.Context(), nil)
		})
	}
	for _, b := range []*mcptest.Server{modern, legacy} {
		calls := 0
		for _, ex := range b.Requests() {
			if strings.Contains(string(ex.Body), `"tools/call"`) {
				calls++
			}
		}
		if calls != 8 {
			t.Fatalf("a backend received %d calls, want 8 (two per client)", calls)
		}
	}
	noSecretsIn(t, modern.Requests(), token, signature)
	noSecretsIn(t, legacy.Requests(), token, signature)
}
