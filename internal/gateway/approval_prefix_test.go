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
	// An issuer with an authorization endpoint, where the page sends the browser to sign in.
	iss := startIssuer(t, devissuer.Options{Audience: testResource, WebClients: map[string]devissuer.WebClient{
		"gateway-approval": {RedirectURIs: []string{"https://mcp.test.invalid/team-a/approval/callback"}}}})
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

// TestPagesBaseBehindPathPrefix: the gateway's pages (the approval page, the per-user OAuth
// connect pages, whose links, callback and Client ID Metadata Document are under it) are placed
// behind the prefix server.publicURL puts before server.path, as a tool set at a path of its
// own: with the prefix, without one, and on the host alone when publicURL's path does not end
// in server.path; an approval.baseURL set by hand is kept.
func TestPagesBaseBehindPathPrefix(t *testing.T) {
	for _, tc := range []struct{ public, path, baseURL, pages, approval string }{
		{"https://gw.example/team-a/mcp", "", "", "https://gw.example/team-a", "https://gw.example/team-a"},
		{"https://gw.example/team-a/gw/", "/gw", "", "https://gw.example/team-a", "https://gw.example/team-a"},
		{"https://gw.example/mcp", "", "", "https://gw.example", "https://gw.example"},
		{"https://gw.example/other", "", "", "https://gw.example", "https://gw.example"},
		{"https://gw.example/team-a/mcp", "", "https://pages.example/x", "https://gw.example/team-a", "https://pages.example/x"},
	} {
		c := &Config{}
		c.Server.PublicURL, c.Server.Path, c.Approval.BaseURL = tc.public, tc.path, tc.baseURL
		if got := c.publicBase(); got != tc.pages {
			t.Errorf("%s at %q: the pages' base is %q, want %q", tc.public, tc.path, got, tc.pages)
		}
		if got := c.approvalConfig().BaseURL; got != tc.approval {
			t.Errorf("%s at %q, approval.baseURL %q: the page's base is %q, want %q", tc.public, tc.path, tc.baseURL, got, tc.approval)
		}
	}
}
