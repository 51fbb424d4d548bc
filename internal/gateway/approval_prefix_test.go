package gateway

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestApprovalPageBehindPathPrefix: with the gateway published under a path prefix by a balancer
// that strips it (server.publicURL https://host/team-a/mcp, server.path /mcp) and no
// approval.baseURL, the confirmation URL a client is sent to keeps the prefix, and the page is
// served at the path the balancer forwards (/approval/c/ID): it sends the browser to sign in,
// with the prefixed callback as its redirect URI.
func TestApprovalPageBehindPathPrefix(t *testing.T) {
	const public = "https://mcp.test.invalid/team-a/mcp"
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Server.PublicURL = public
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "echo-page", Upstream: "alpha", Tools: []string{"echo"}, Confirm: authz.ConfirmURL}}
		c.Approval.ClientID = "gateway-approval"
	}, alpha)
	_, ask := callWithMeta(t, gw, mint(t, iss, devissuer.Claims{"sub": "alice", "aud": public}), urlElicitMeta, "alpha__echo", `{"text":"x"}`, "")
	p := ask.Result.InputRequests["io.mcp-gateway/confirm"].Params
	if want := "https://mcp.test.invalid/team-a/approval/c/" + p.ElicitationID; p.ElicitationID == "" || p.URL != want {
		t.Fatalf("the confirmation URL is %q, want %s", p.URL, want)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get("http://" + gw.MCP + "/approval/c/" + p.ElicitationID)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	signIn, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusSeeOther ||
		signIn.Query().Get("redirect_uri") != "https://mcp.test.invalid/team-a/approval/callback" {
		t.Fatalf("the page at the forwarded path: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}
