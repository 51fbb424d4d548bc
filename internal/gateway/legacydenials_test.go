package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestLegacyDenialsNameTheRevision: a call that needs the approval page, from a pre-2026 client
// that did not declare URL elicitation, is told why in the same terms with the denials switch
// on as off: a 2025-06-18 client, whose revision has no URL elicitation to declare, that its
// revision lacks it (never that it did not declare it), a 2025-11-25 client that it did not
// declare it. Nothing reaches the backend.
func TestLegacyDenialsNameTheRevision(t *testing.T) {
	for _, denials := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "denials"}[denials], func(t *testing.T) {
			alpha := mcptest.StartServer(t, "alpha")
			gw := legacyGateway(t, nil, func(c *Config) {
				c.Auth.Policy.Rules = append([]authz.RuleConfig{
					{ID: "page", Upstream: "alpha", Tools: []string{mcptest.ToolEcho}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmURL},
				}, c.Auth.Policy.Rules...)
				c.Approval.ClientID = "gateway-approval"
				if denials {
					c.Server.DraftErrors = []string{"denials"}
				}
			}, alpha)
			for version, want := range map[string]string{
				"2025-06-18": "which MCP 2025-06-18 (the version this client speaks) does not have",
				"2025-11-25": "which this client did not declare",
			} {
				// Raw declares form-mode elicitation only.
				c := &legacyclient.Raw{Token: mintFor(t, gw.iss, "alice"), Protocol: version}
				sid := c.Initialize(t, gw.url())
				r := c.Post(t, gw.url(), sid, c.CallBody("alpha__"+mcptest.ToolEcho, "approve me"))
				text := legacyclient.ResultText(r.Msgs)
				if denials {
					want = strings.Replace(want, "which this client did not declare", "it did not declare URL elicitation", 1)
				}
				if r.Status != http.StatusOK || !strings.Contains(text, want) || version == "2025-06-18" && strings.Contains(text, "declare") {
					t.Errorf("%s: want %q, got %s", version, want, r)
				}
				if got := strings.Contains(r.Body, "io.modelcontextprotocol/authorization"); got != denials {
					t.Errorf("%s: envelope %v, want %v: %s", version, got, denials, r)
				}
			}
			if n := toolCalls(alpha); n != 0 {
				t.Fatalf("the backend got %d calls", n)
			}
		})
	}
}
