package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestInstructionsFollowPolicy: server/discover (and a pre-2026 client's initialize, answered
// from it) passes on a backend's server instructions only to a caller the policy lets use
// something of that backend. The instructions name the backend and describe its tools: served to
// everyone, they told a caller the policy gives nothing of that the backend exists and what it
// does, which its lists and calls answer as unknown. The answer then depends on the caller, and
// says so (cacheScope private).
func TestInstructionsFollowPolicy(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithInstructions("alpha notes"))
	payroll := mcptest.StartServer(t, "payroll", mcptest.WithInstructions("payroll: call export_salaries on the 25th"))
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "contractors-out", Upstream: "payroll", Effect: authz.EffectDeny,
				Claims: map[string][]string{"groups": {"contractors"}}},
			// Payroll's allow rule gives tools only: a deny of every tool closes it whole.
			{ID: "interns-no-tools", Upstream: "payroll", Effect: authz.EffectDeny, Tools: []string{"*"},
				Claims: map[string][]string{"groups": {"interns"}}},
			{ID: "alpha", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}},
			{ID: "payroll", Upstream: "payroll", Tools: []string{"*"}, AllScopes: []string{"payroll:admin"}},
		}
	}, alpha, payroll)
	base := "http://" + gw.MCP + "/mcp"
	callers := []struct {
		name     string
		claims   devissuer.Claims
		wantSeen []string
		wantNot  []string
	}{
		{"a user of alpha only", devissuer.Claims{"sub": "alice", "scope": "tools:use"},
			[]string{"alpha notes"}, []string{"payroll", "export_salaries"}},
		{"a payroll admin", devissuer.Claims{"sub": "boss", "scope": "tools:use payroll:admin"},
			[]string{"alpha notes", "export_salaries"}, nil},
		{"a payroll admin the deny rule covers", devissuer.Claims{"sub": "temp", "scope": "tools:use payroll:admin", "groups": []string{"contractors"}},
			[]string{"alpha notes"}, []string{"payroll", "export_salaries"}},
		{"a payroll admin denied every payroll tool", devissuer.Claims{"sub": "intern", "scope": "tools:use payroll:admin", "groups": []string{"interns"}},
			[]string{"alpha notes"}, []string{"payroll", "export_salaries"}},
		{"no scope at all", devissuer.Claims{"sub": "nobody"},
			nil, []string{"alpha notes", "payroll", "export_salaries"}},
	}
	for _, c := range callers {
		t.Run(c.name, func(t *testing.T) {
			tok := mint(t, iss, c.claims)
			h := modernHeaders("server/discover", "")
			h.Set("Authorization", "Bearer "+tok)
			status, _, body := post(t, base, h, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+testMeta+`}}`)
			var res struct {
				Result struct {
					Instructions string `json:"instructions"`
					CacheScope   string `json:"cacheScope"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(body), &res); err != nil || status != http.StatusOK {
				t.Fatalf("discover: %d %s", status, body)
			}
			if res.Result.CacheScope != "private" {
				t.Errorf("cacheScope %q: the instructions depend on the caller", res.Result.CacheScope)
			}
			init := (&legacyclient.Raw{Token: tok}).Post(t, base, "",
				`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
			if init.Status != http.StatusOK {
				t.Fatalf("initialize: %s", init)
			}
			for what, text := range map[string]string{"server/discover": res.Result.Instructions, "initialize": init.Body} {
				for _, s := range c.wantSeen {
					if !strings.Contains(text, s) {
						t.Errorf("%s lacks %q: %s", what, s, text)
					}
				}
				for _, s := range c.wantNot {
					if strings.Contains(text, s) {
						t.Errorf("%s shows %q: %s", what, s, text)
					}
				}
			}
		})
	}
}
