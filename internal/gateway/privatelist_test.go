package gateway

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestPrivateListPerToken: a backend list marked private is reused only within the
// authorization context the backend answered for ("a new token means a new cache",
// docs/protocol.md §5.1). Through a token-exchange backend, that context is the exchanged token,
// which follows the caller's token: a second token of the same user, with fewer scopes, must get
// the list the backend gives that token, never the one cached for the first.
func TestPrivateListPerToken(t *testing.T) {
	iss := newExchangeIssuer(t)
	ex := mcptest.StartServer(t, "ex", mcptest.WithCacheHints(600000, "private"))
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "*", Tools: []string{"*"}, AnyScope: []string{"tools:use"}}}
		// No scope asked: the exchanged token carries the caller's own (devissuer).
		u := exchangeUpstream("ex", ex.URL(), iss)
		c.Upstreams = []UpstreamConfig{u}
	})
	defer stop()
	callers := []struct{ sub, scope string }{
		{"alice", "tools:use files:write"},
		{"alice", "tools:use"}, // the same user, a narrower token
		{"bob", "tools:use"},
	}
	tokens := make([]string, len(callers))
	for i, c := range callers {
		tokens[i] = mint(t, iss, devissuer.Claims{"sub": c.sub, "scope": c.scope})
		cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(tokens[i]))
		if names := toolNames(t, cs); len(names) == 0 {
			t.Fatalf("%s (%s) listed nothing", c.sub, c.scope)
		}
		if !listedAs(t, ex, c.sub, c.scope) {
			t.Fatalf("%s's token with scope %q got a list the backend never gave it (exchanged tokens of the lists: %v)\n%s",
				c.sub, c.scope, listContexts(t, ex), logs.String())
		}
	}
	// The first token again, within the list's ttlMs: its own cached copy serves it.
	before := len(ex.RequestsOf("tools/list"))
	toolNames(t, mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(tokens[0])))
	if after := len(ex.RequestsOf("tools/list")); after != before {
		t.Fatalf("the same token's list was fetched again (%d tools/list, then %d): the private copy was not cached", before, after)
	}
}

// listedAs reports whether s answered a tools/list to an exchanged token of sub with scope.
func listedAs(t *testing.T, s *mcptest.Server, sub, scope string) bool {
	t.Helper()
	for _, c := range listContexts(t, s) {
		if c == sub+" "+scope {
			return true
		}
	}
	return false
}

// listContexts returns "sub scope" of the bearer token of every tools/list s received.
func listContexts(t *testing.T, s *mcptest.Server) []string {
	t.Helper()
	var out []string
	for _, ex := range s.RequestsOf("tools/list") {
		tok, _ := strings.CutPrefix(ex.Header.Get("Authorization"), "Bearer ")
		if strings.Count(tok, ".") != 2 {
			out = append(out, "(no token)")
			continue
		}
		claims := mcptest.JWTClaims(t, tok)
		sub, _ := claims["sub"].(string)
		scope, _ := claims["scope"].(string)
		out = append(out, sub+" "+scope)
	}
	return out
}
