package gateway

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestApprovalPageBehindPrefixInBrowser: a balancer routes http://localhost:PORT/team-a/ to the
// gateway and strips the prefix, and nothing else; the gateway knows only its publicURL
// (…/team-a/mcp), no approval.baseURL. A person in chromium opens the page the client is sent to,
// signs in at a real OpenID provider (whose callback is the prefixed one), approves the call on
// the page, and the client's retry through the balancer runs it once.
func TestApprovalPageBehindPrefixInBrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.New(t)
	op := realop.Start(t, realop.Options{})
	alpha := mcptest.StartServer(t, "alpha")
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	public := "http://localhost:" + strings.TrimPrefix(front.Addr().String(), "127.0.0.1:") + "/team-a"
	op.AddWebClient(approvalClientID, approvalClientSecret, public+"/approval/callback")
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = false
		c.Server.PublicURL = public + "/mcp"
		c.Auth.Issuers = []authz.IssuerConfig{{Issuer: op.Issuer(), Audiences: []string{realop.UserClientID}}}
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "echo-approval", Upstream: "alpha", Tools: []string{"echo"}, Confirm: authz.ConfirmURL}}
		c.MRTR.Keys = testKeys
		c.Approval.ClientID, c.Approval.ClientSecret = approvalClientID, Secret{Value: approvalClientSecret}
	}, alpha)
	balancer := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: "http", Host: gw.MCP})
		r.Out.URL.Path = strings.TrimPrefix(r.In.URL.Path, "/team-a")
		r.Out.URL.RawPath = ""
		r.Out.Host = r.In.Host
	}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/team-a/") {
			http.NotFound(w, r) // the balancer routes nothing else to the gateway
			return
		}
		balancer.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(front) }()
	t.Cleanup(func() { _ = srv.Close() })

	tok, err := op.UserToken(callCtx(t), op.Username(), realop.UserPassword)
	if err != nil {
		t.Fatal(err)
	}
	first := modernCall(t, public+"/mcp", tok, capsURL, "alpha__echo", `{"text":"approved behind the prefix"}`, "")
	page := pageOf(t, first)
	if !strings.HasPrefix(page, public+"/approval/c/") {
		t.Fatalf("the client is sent to %s, not under %s", page, public)
	}
	tab := browsertest.Tab(t, browser)
	signInOnPage(t, tab, page, op.Username())
	browsertest.Approve(t, tab)
	w := modernCall(t, public+"/mcp", tok, capsURL, "alpha__echo", `{"text":"approved behind the prefix"}`, decided("accept", stateOf(t, first)))
	if w.Status != http.StatusOK || !strings.Contains(w.Msg, "approved behind the prefix") || toolCalls(alpha) != 1 {
		t.Fatalf("the approved retry: %d %s; the backend received %d calls", w.Status, w.Msg, toolCalls(alpha))
	}
}
