package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestLegacyTokenExchangeCallers: through the gateway, two callers of a 2025-11-25 backend
// configured for token exchange (era learnt with protocol auto) reach it as themselves, each on
// a session of its own, never as the gateway.
func TestLegacyTokenExchangeCallers(t *testing.T) {
	ctx := context.Background()
	iss := newExchangeIssuer(t)
	legacy := mcptest.StartLegacyServer(t, "old")
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "*", Tools: []string{"*"}, AnyScope: []string{"tools:use"}}}
		c.Upstreams = []UpstreamConfig{exchangeUpstream("old", legacy.URL(), iss)}
	})
	defer stop()
	for _, who := range []string{"alice", "bob", "alice"} {
		cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(mintFor(t, iss, who)))
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "old__whoami", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v\n%s", who, err, res, logs.String())
		}
		if got := subOf(t, lastCall(t, legacy)); got != who {
			t.Fatalf("%s's call reached the legacy backend as %q", who, got)
		}
	}
	owners := map[string]string{}
	for _, ex := range legacy.Requests() {
		if strings.Contains(string(ex.Body), `"method":"initialize"`) {
			owners[ex.ResponseHeader.Get("Mcp-Session-Id")] = subOf(t, ex)
		}
	}
	for _, ex := range legacy.Requests() {
		id := ex.Header.Get("Mcp-Session-Id")
		if id == "" || ex.Method != "POST" {
			continue
		}
		if subOf(t, ex) != owners[id] {
			t.Fatalf("a request on %s's session came as %q", owners[id], subOf(t, ex))
		}
		// The gateway's own sessions carry its discovery and health pings, nothing of a caller.
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(ex.Body, &m)
		if owners[id] == "mcp-gateway" && m.Method != "notifications/initialized" && m.Method != "ping" {
			t.Fatalf("a %s went on the gateway's own session", m.Method)
		}
	}
	seen := map[string]int{}
	for _, sub := range owners {
		seen[sub]++
	}
	if seen["alice"] != 1 || seen["bob"] != 1 {
		t.Fatalf("sessions by owner %v, want one each for alice and bob", seen)
	}
}

// lastCall returns the last tools/call the legacy backend received.
func lastCall(t *testing.T, s *mcptest.Server) mcptest.Exchange {
	t.Helper()
	ex := s.Requests()
	for i := len(ex) - 1; i >= 0; i-- {
		if strings.Contains(string(ex[i].Body), `"method":"tools/call"`) {
			return ex[i]
		}
	}
	t.Fatal("the legacy backend received no tools/call")
	return mcptest.Exchange{}
}

// subOf returns the "sub" of the bearer token of a request the backend received.
func subOf(t *testing.T, ex mcptest.Exchange) string {
	t.Helper()
	tok, _ := strings.CutPrefix(ex.Header.Get("Authorization"), "Bearer ")
	if strings.Count(tok, ".") != 2 {
		return ""
	}
	sub, _ := mcptest.JWTClaims(t, tok)["sub"].(string)
	return sub
}
