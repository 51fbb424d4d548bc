package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestLegacyBatchRefusalsSayWhy: a message of a 2025-03-26 batch refused after authentication
// is answered in-band, where the WWW-Authenticate challenge that says why (alone, it would come
// with its 401 or 403) has no place. Its message said only "a valid access token is required"
// for a call only a DPoP-bound token may make, though the token was valid, and "insufficient
// scope" without the scope. Now the message says what the challenge says: that a DPoP-bound
// token is needed, and which scope the step-up needs. The allowed call of the batch is
// answered, and only it reaches the backend; alone, the same calls still get the challenges.
func TestLegacyBatchRefusalsSayWhy(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := legacyGateway(t, nil, func(c *Config) {
		c.Auth.DPoP.Mode = authz.DPoPAllowed
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "strong", Upstream: "alpha", Tools: []string{mcptest.ToolAdd}, AnyScope: []string{"tools:use"}, DPoP: authz.DPoPRequired},
			{ID: "admin", Upstream: "alpha", Tools: []string{mcptest.ToolWhoAmI}, AnyScope: []string{"tools:admin"}},
			{ID: "use", Upstream: "alpha", Tools: []string{mcptest.ToolEcho}, AnyScope: []string{"tools:use"}},
		}
	}, alpha)
	alice := &legacyclient.Raw{Token: mintFor(t, gw.iss, "alice"), Protocol: legacyclient.Protocol20250326}
	sid := alice.Initialize(t, gw.url())
	add := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha__add","arguments":{"a":1,"b":2}}}`
	whoami := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"alpha__whoami","arguments":{}}}`
	echo := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"x"}}}`
	alpha.Reset()
	r := alice.Post(t, gw.url(), sid, "["+add+","+whoami+","+echo+"]")
	if r.Status != http.StatusOK || len(r.Msgs) != 3 {
		t.Fatalf("batch: want 200 with 3 answers, got %s", r)
	}
	want := map[string]string{"1": "requires a DPoP-bound access token", "2": "needs the scopes: tools:admin"}
	for _, m := range r.Msgs {
		var a struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  *struct {
				Code    int
				Message string
			}
		}
		if err := json.Unmarshal(m, &a); err != nil {
			t.Fatal(err)
		}
		switch id := string(a.ID); {
		case want[id] == "" && a.Error != nil:
			t.Errorf("the allowed call was refused: %s", m)
		case want[id] != "" && (a.Error == nil || a.Error.Code != -32013 || !strings.Contains(a.Error.Message, want[id])):
			t.Errorf("message %s: %s, want -32013 saying %q", id, m, want[id])
		}
	}
	if n := toolCalls(alpha); n != 1 {
		t.Errorf("the backend got %d calls, want the allowed one", n)
	}
	for body, status := range map[string]int{add: http.StatusUnauthorized, whoami: http.StatusForbidden} {
		r := alice.Post(t, gw.url(), sid, body)
		if r.Status != status || len(r.Header.Values("WWW-Authenticate")) == 0 {
			t.Errorf("alone: %s, want %d with its challenge", r, status)
		}
	}
}
