package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
	"github.com/mcp-gateway/gateway/internal/testsupport/freeport"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/oauthbackend"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// Per-user OAuth end to end with the gateway binary: two gateway processes sharing a real
// Redis behind one public address, a real OpenID provider for the callers (the zitadel example
// OP) and a second instance of it as the backend's own authorization server, a go-sdk backend
// that verifies that server's tokens with go-oidc and answers as the user it sees, go-sdk
// clients of both eras, and headless chromium for the person who connects an account.

const (
	uoBackend      = "notes"
	uoPagesClient  = "gateway-pages"
	uoPagesSecret  = "pages-client-secret"
	uoASClient     = "gateway-notes"
	uoASSecret     = "notes-client-secret"
	uoVaultKey     = "vault-key-0123456789-0123456789-0123456789"
	uoWhoami       = uoBackend + "__whoami"
	uoConnectKey   = "io.mcp-gateway/connect"
	uoAdminToken   = "admin-token-0123456789-0123456789"
	uoConnectTitle = "Continue to the authorization server"
)

// replicaSwitch is the public address in front of the two replicas: a reverse proxy that sends
// every request to the replica the test chose last, so a test decides which replica serves
// which step of a browser's consent (as a load balancer might, without stickiness).
type replicaSwitch struct {
	to      atomic.Pointer[httputil.ReverseProxy]
	proxies map[string]*httputil.ReverseProxy
}

func newReplicaSwitch(targets map[string]string) *replicaSwitch {
	s := &replicaSwitch{proxies: map[string]*httputil.ReverseProxy{}}
	for name, addr := range targets {
		u := &url.URL{Scheme: "http", Host: addr}
		// The replicas see the public host, as behind a load balancer that keeps Host.
		s.proxies[name] = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
		}}
	}
	return s
}

func (s *replicaSwitch) use(name string) { s.to.Store(s.proxies[name]) }

func (s *replicaSwitch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.to.Load().ServeHTTP(w, r)
}

// userOAuthSite is the whole deployment of the test.
type userOAuthSite struct {
	op, as  *realop.Provider
	backend *oauthbackend.Backend
	alpha   *mcptest.Server // a backend with the gateway's own credentials, beside the per-user one
	redis   *testredis.Server
	rename  *intercepttest.Server // turns a call of alpha into one of the per-user backend
	// refuse makes the backend answer 401 to every token, as when its authorization server
	// revoked them.
	refuse   atomic.Bool
	base     string // the public scheme and host
	sw       *replicaSwitch
	replicas map[string]approvalReplica
	admins   map[string]string
	logs     []string
	// asTimeout is the backend's auth.timeout (one request to its authorization server);
	// empty, the default.
	asTimeout string
	// refreshCooldown is userOAuth.refreshCooldown; empty, the default.
	refreshCooldown string
}

// uoSiteOptions changes the site for a test: how the backend's authorization server runs and
// how long the gateway waits for it.
type uoSiteOptions struct {
	as        realop.Options // ISSResponse is always on
	asTimeout string
	// refreshCooldown is userOAuth.refreshCooldown; empty, the default.
	refreshCooldown string
}

func startUserOAuthSite(t *testing.T, o uoSiteOptions) *userOAuthSite {
	t.Helper()
	o.as.AuthServer.ISSResponse = true
	site := &userOAuthSite{op: realop.Start(t, realop.Options{}), as: realop.Start(t, o.as),
		replicas: map[string]approvalReplica{}, admins: map[string]string{}, asTimeout: o.asTimeout, refreshCooldown: o.refreshCooldown}
	site.backend = oauthbackend.Start(t, uoBackend, oauthbackend.Options{Issuer: site.as.Issuer(), ClientIDs: []string{uoASClient},
		Scopes: []string{"openid", "offline_access", "notes"}, Refuse: func(string) bool { return site.refuse.Load() }})
	site.alpha = mcptest.StartServer(t, "alpha")
	// An interceptor that turns alpha's echo of "to-notes" into a call of the per-user backend.
	site.rename = intercepttest.Start(t, []intercepttest.Interceptor{{Name: "rename", Type: intercept.TypeMutation,
		Handle: intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
			const from = `"alpha__echo","arguments":{"text":"to-notes"}`
			if !strings.Contains(string(p), from) {
				return nil
			}
			return json.RawMessage(strings.Replace(string(p), from, `"`+uoWhoami+`","arguments":{}`, 1))
		})}})
	redis := testredis.Start(t)
	site.redis = redis
	bin, dir := buildGatewayBinary(t), t.TempDir()
	secrets := map[string]string{
		"mrtr": writeSecretFile(t, dir, "mrtr-key", testKeys[0].Secret.Value), "pages": writeSecretFile(t, dir, "pages", uoPagesSecret),
		"as": writeSecretFile(t, dir, "as", uoASSecret), "vault": writeSecretFile(t, dir, "vault", uoVaultKey),
		"admin": writeSecretFile(t, dir, "admin", uoAdminToken),
	}
	ports := freeport.Loopback(t, 5)
	site.base = fmt.Sprintf("http://localhost:%d", ports[0])
	site.op.AddWebClient(uoPagesClient, uoPagesSecret, site.base+"/approval/callback")
	site.as.AddJWTWebClient(uoASClient, uoASSecret, site.base+"/connect/callback/"+uoBackend)
	targets := map[string]string{}
	for i, name := range []string{"a", "b"} {
		mcpAddr, adminAddr := fmt.Sprintf("127.0.0.1:%d", ports[1+2*i]), fmt.Sprintf("127.0.0.1:%d", ports[2+2*i])
		config := writeYAML(t, dir, name+".yaml", site.config(mcpAddr, adminAddr, redis.URL(), secrets))
		site.replicas[name] = approvalReplica{base: site.base, mcp: mcpAddr, proc: startGatewayProcess(t, bin, "replica-"+name, config, adminAddr)}
		site.admins[name] = adminAddr
		site.logs = append(site.logs, site.replicas[name].proc.logPath)
		targets[name] = mcpAddr
	}
	site.sw = newReplicaSwitch(targets)
	site.sw.use("a")
	srv := &http.Server{Addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), Handler: site.sw}
	go func() { _ = srv.ListenAndServe() }()
	t.Cleanup(func() { _ = srv.Close() })
	for _, r := range site.replicas {
		r.proc.waitReady(t)
	}
	return site
}

func (s *userOAuthSite) config(mcpAddr, adminAddr, redisURL string, secrets map[string]string) map[string]any {
	file := func(k string) map[string]any { return map[string]any{"file": secrets[k]} }
	auth := map[string]any{"type": "userOAuth", "clientID": uoASClient, "clientSecret": file("as"), "authServer": s.as.Issuer(),
		"scopes": []string{"openid", "offline_access", "notes"}}
	if s.asTimeout != "" {
		auth["timeout"] = s.asTimeout
	}
	vault := map[string]any{"keys": []any{map[string]any{"id": "v1", "secret": file("vault")}}}
	if s.refreshCooldown != "" {
		vault["refreshCooldown"] = s.refreshCooldown
	}
	return map[string]any{
		"server": map[string]any{"listen": mcpAddr, "publicURL": s.base + "/mcp", "drainDelay": "0s", "shutdownTimeout": "5s",
			"allowedOrigins": []string{s.base}, "draftErrors": []string{"denials"}},
		"admin": map[string]any{"listen": adminAddr, "token": file("admin")},
		"log":   map[string]any{"level": "debug", "format": "text"},
		"auth": map[string]any{
			"issuers": []any{map[string]any{"issuer": s.op.Issuer(), "audiences": []string{realop.UserClientID}}},
			"policy": map[string]any{"rules": []any{map[string]any{"id": "notes", "upstream": uoBackend, "tools": []string{"*"}},
				map[string]any{"id": "alpha", "upstream": "alpha", "tools": []string{"*"}}}},
		},
		"mrtr":      map[string]any{"keys": []any{map[string]any{"id": testKeys[0].ID, "secret": file("mrtr")}}},
		"redis":     map[string]any{"url": redisURL},
		"approval":  map[string]any{"clientID": uoPagesClient, "clientSecret": file("pages"), "baseURL": s.base},
		"userOAuth": vault,
		"interceptors": []any{map[string]any{"name": "rename", "url": s.rename.URL(), "type": "mutation",
			"rules": []any{map[string]any{"upstream": "alpha", "tools": []string{"echo"}, "phases": []string{"request"}}}}},
		"upstreams": []any{map[string]any{"name": uoBackend, "url": s.backend.URL(), "timeout": "5s", "protocol": "2026-07-28",
			"auth": auth},
			map[string]any{"name": "alpha", "url": s.alpha.URL(), "timeout": "5s"}},
	}
}

// connectInBrowser signs in to the gateway on page as the caller, continues to the backend's
// authorization server on replica start, and signs in there as asUser with the callback served
// by replica callback; it waits for the page that says Connected.
func (s *userOAuthSite) connectInBrowser(t *testing.T, tab context.Context, page, start, callback, asUser string) {
	t.Helper()
	s.sw.use(start)
	signInOnPage(t, tab, page, s.op.Username())
	if body := browsertest.Text(t, tab, "main"); !strings.Contains(body, uoConnectTitle) || !strings.Contains(body, uoBackend) ||
		!strings.Contains(body, "offline_access") {
		t.Fatalf("the connect page:\n%s", body)
	}
	s.loginAtAS(t, tab, "#continue", callback, asUser)
}

// loginAtAS clicks button (which sends the browser to the authorization server), signs in
// there as asUser, and has the callback served by replica callback.
func (s *userOAuthSite) loginAtAS(t *testing.T, tab context.Context, button, callback, asUser string) {
	t.Helper()
	// The page's buttons count once it has been on screen a second (webpage.MinDwell): the
	// replicas are processes on the real clock, so a user reading the page, not a timing under
	// test.
	time.Sleep(browsertest.Dwell)
	browsertest.Step(t, tab, "continue to the authorization server",
		chromedp.Click(chromedp.CSS(button)),
		chromedp.WaitVisible(chromedp.CSS("#username")))
	s.sw.use(callback)
	browsertest.Step(t, tab, "sign in at the authorization server",
		chromedp.SendKeys(chromedp.CSS("#username"), asUser),
		chromedp.SendKeys(chromedp.CSS("#password"), realop.UserPassword),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("main h1")))
	if body := browsertest.Text(t, tab, "main"); !strings.Contains(body, "Connected") {
		t.Fatalf("after the callback:\n%s", body)
	}
}

// logsWithout returns the replicas' logs together, failing the test if any holds one of
// secrets.
func (s *userOAuthSite) logsWithout(t *testing.T, secrets []string) []byte {
	t.Helper()
	var all []byte
	for _, path := range s.logs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	for _, secret := range secrets {
		if secret != "" && bytes.Contains(all, []byte(secret)) {
			t.Error("a replica's log holds a token or secret")
		}
	}
	return all
}

// whoami calls the backend's whoami through cs and returns its text, failing unless it ran.
func whoami(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(callCtx(t), &mcp.CallToolParams{Name: uoWhoami, Arguments: map[string]any{}})
	if err != nil || res.IsError || res.NeedsInput() {
		t.Fatalf("whoami: %v %+v", err, res)
	}
	return mcptest.ResultText(res)
}

// needsConnect calls whoami through cs (a client that handles input_required itself) and
// returns the connect page's URL it is sent to; nothing reaches the backend.
func (s *userOAuthSite) needsConnect(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	before := toolCalls(s.backend.Server)
	res, err := cs.CallTool(callCtx(t), &mcp.CallToolParams{Name: uoWhoami, Arguments: map[string]any{}})
	if err != nil || !res.NeedsInput() {
		t.Fatalf("expected input_required: %v %+v", err, res)
	}
	p, ok := res.InputRequests[uoConnectKey].(*mcp.ElicitParams)
	if !ok || p.Mode != "url" || !strings.HasPrefix(p.URL, s.base+"/connect/l/") || p.ElicitationID == "" {
		t.Fatalf("not a URL elicitation of the connect page: %#v", res.InputRequests)
	}
	if n := toolCalls(s.backend.Server); n != before {
		t.Errorf("the backend was called %d times without the caller's token", n-before)
	}
	// The structured authorization denial (server.draftErrors: [denials]): the user acts at the
	// URL.
	if env, _ := json.Marshal(res.Meta["io.modelcontextprotocol/authorization"]); !strings.Contains(string(env), `"remediation":"available"`) ||
		!strings.Contains(string(env), `"remediationHints":[{"type":"url"}]`) {
		t.Errorf("the denial envelope: %s", env)
	}
	return p.URL
}

// adminRevoke posts an operator's revocation to replica's admin listener; it returns the
// status and the body.
func (s *userOAuthSite) adminRevoke(t *testing.T, replica, body string) string {
	t.Helper()
	status, b := s.admin(t, replica, http.MethodPost, "/useroauth/revoke", body)
	return fmt.Sprintf("%d %s", status, strings.TrimSpace(b))
}

// admin sends a request to replica's admin listener with the admin token.
func (s *userOAuthSite) admin(t *testing.T, replica, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(callCtx(t), method, "http://"+s.admins[replica]+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+uoAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestUserOAuthInBrowser: a 2026-07-28 client and a 2025-11-25 client each connect the backend
// through the connect page and then call it as the account they connected, through either
// replica; the operator's revocation and the user's disconnect stop it; no token reaches the
// logs.
func TestUserOAuthInBrowser(t *testing.T) {
	browser := browsertest.New(t)
	site := startUserOAuthSite(t, uoSiteOptions{})
	tok, err := site.op.UserToken(callCtx(t), site.op.Username(), realop.UserPassword)
	if err != nil {
		t.Fatal(err)
	}
	connect := func(name string, opts ...mcptest.ClientOption) *mcp.ClientSession {
		return mcptest.Connect(t, "http://"+site.replicas[name].mcp+"/mcp", append([]mcptest.ClientOption{mcptest.WithBearer(tok)}, opts...)...)
	}
	// The caller connects the authorization server's second user: the backend sees that
	// account, whatever the gateway calls the caller.
	wantSub := "sub=" + realop.OtherUserID

	t.Run("a 2026-07-28 client, consent across replicas", func(t *testing.T) {
		h := newPageHandoff(t)
		cs := connect("a", mcptest.WithCapabilities(urlElicitation), mcptest.WithElicitation(h.handler))
		res, err := callThroughPage(t, cs, h, &mcp.CallToolParams{Name: uoWhoami, Arguments: map[string]any{}}, func(page string) {
			if !strings.HasPrefix(page, site.base+"/connect/l/") {
				t.Errorf("page URL %q is not the connect page", page)
			}
			if n := toolCalls(site.backend.Server); n != 0 {
				t.Errorf("the backend was called %d times before the consent", n)
			}
			// Started on replica a, the callback on replica b.
			site.connectInBrowser(t, browsertest.Tab(t, browser), page, "a", "b", realop.OtherUsername)
		})
		if err != nil || res.IsError || mcptest.ResultText(res) != wantSub {
			t.Fatalf("the call after connecting: %v %+v", err, res)
		}
		if got := whoami(t, connect("b")); got != wantSub {
			t.Errorf("on replica b: %q", got)
		}
	})

	t.Run("a 2025-11-25 client calls as the same user", func(t *testing.T) {
		cs := connect("b", mcptest.WithProtocolVersion("2025-11-25"))
		if got := whoami(t, cs); got != wantSub {
			t.Errorf("2025-11-25 client: %q", got)
		}
	})

	t.Run("the operator revokes the caller", func(t *testing.T) {
		for body, want := range map[string]string{
			`{}`: "400", `{"backend":"notes","issuer":"x","subject":"y"}`: "400", `{"issuer":"x"}`: "400",
			`{"backend":"nope"}`: "404", `{"backend":"notes","extra":1}`: "400", `not json`: "400",
		} {
			if got := site.adminRevoke(t, "b", body); !strings.HasPrefix(got, want+" ") {
				t.Errorf("revocation %s: %s, want %s", body, got, want)
			}
		}
		body := fmt.Sprintf(`{"issuer":%q,"subject":%q}`, site.op.Issuer(), realop.UserID)
		if got := site.adminRevoke(t, "b", body); got != `200 {"revoked":1}` {
			t.Fatalf("revocation: %s", got)
		}
		manual := connect("a", mcptest.WithCapabilities(urlElicitation), mcptest.WithManualMRTR())
		page := site.needsConnect(t, manual)
		// A 2025-11-25 client without URL elicitation gets the link in a tool error.
		legacy := connect("b", mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithCapabilities(&mcp.ClientCapabilities{}))
		res, err := legacy.CallTool(callCtx(t), &mcp.CallToolParams{Name: uoWhoami, Arguments: map[string]any{}})
		if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), site.base+"/connect/l/") {
			t.Fatalf("2025-11-25 client without URL elicitation: %v %+v", err, res)
		}
		if env, _ := json.Marshal(res.Meta["io.modelcontextprotocol/authorization"]); !strings.Contains(string(env), `"remediation":"undisclosed"`) {
			t.Errorf("the denial envelope of the tool error: %s", env)
		}
		if !strings.HasPrefix(page, site.base+"/connect/l/") {
			t.Errorf("2026-07-28 client's page: %q", page)
		}
		// A 2025-11-25 client that declared URL elicitation is asked on its call's stream, and
		// its call finishes once the user is back. Its accept, as that revision's URL mode has
		// it, says only that it sent its user to the page: it comes at once, and the call waits
		// for the connect rather than sending the client a new page round after round.
		h := &acceptAtOnce{pageHandoff: newPageHandoff(t)}
		withURL := connect("b", mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithCapabilities(urlElicitation),
			mcptest.WithElicitation(h.handler))
		res, err = callThroughPage(t, withURL, h.pageHandoff, &mcp.CallToolParams{Name: uoWhoami, Arguments: map[string]any{}}, func(page string) {
			site.connectInBrowser(t, browsertest.Tab(t, browser), page, "b", "a", realop.OtherUsername)
		})
		if err != nil || res.IsError || mcptest.ResultText(res) != wantSub {
			t.Fatalf("the 2025-11-25 client's call after connecting (asked %d times): %v %+v %s", h.asked.Load(), err, res, mcptest.ResultText(res))
		}
		if n := h.asked.Load(); n != 1 {
			t.Errorf("the 2025-11-25 client was sent to a connect page %d times, want once", n)
		}
		if got := whoami(t, legacy); got != wantSub {
			t.Errorf("after connecting again: %q", got)
		}
	})

	t.Run("the user disconnects on the list page", func(t *testing.T) {
		tab := browsertest.Tab(t, browser)
		site.sw.use("b")
		signInOnPage(t, tab, site.base+"/connect/", site.op.Username())
		if body := browsertest.Text(t, tab, "main"); !strings.Contains(body, "Connected") {
			t.Fatalf("the list page:\n%s", body)
		}
		time.Sleep(browsertest.Dwell) // a user reading the page before Disconnect, which counts after webpage.MinDwell
		browsertest.ClickOn(t, tab, "#disconnect-"+uoBackend)
		waitText(t, tab, "Disconnected")
		manual := connect("a", mcptest.WithCapabilities(urlElicitation), mcptest.WithManualMRTR())
		site.needsConnect(t, manual)
		// A retry that declines the page ends the call, which did not run.
		declined := &mcp.CallToolParams{Name: uoWhoami, Arguments: map[string]any{},
			InputResponses: mcp.InputResponseMap{uoConnectKey: &mcp.ElicitResult{Action: "decline"}}}
		res, err := manual.CallTool(callCtx(t), declined)
		if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "was not connected (declined)") {
			t.Errorf("a declined connect: %v %+v", err, res)
		}
		// The list page connects without a call, too.
		site.loginAtAS(t, tab, "#connect-"+uoBackend, "a", realop.OtherUsername)
		if got := whoami(t, manual); got != wantSub {
			t.Errorf("after connecting from the list page: %q", got)
		}
	})

	t.Run("audit lines and metrics, never a token", func(t *testing.T) {
		tokens := append(site.backend.Tokens(), tok, uoASSecret, uoVaultKey)
		all := site.logsWithout(t, tokens)
		for _, want := range []string{"useroauth: connected", "useroauth: disconnected", "by=admin", "by=user", "subject=" + site.op.Issuer() + "#" + realop.UserID} {
			if !bytes.Contains(all, []byte(want)) {
				t.Errorf("no audit line with %q", want)
			}
		}
		var scrape string
		for _, r := range []string{"a", "b"} {
			_, m := site.admin(t, r, http.MethodGet, "/metrics", "")
			scrape += m
		}
		for _, want := range []string{`mcp_gateway_user_oauth_consents_total{event="completed",reason="none",upstream="notes"} 1`,
			`mcp_gateway_user_oauth_revocations_total{by="admin",upstream="notes"} 1`,
			`mcp_gateway_user_oauth_vault_records{upstream="notes"} 1`} {
			if !strings.Contains(scrape, want) {
				t.Errorf("the metrics lack %s", want)
			}
		}
		for _, secret := range tokens {
			if strings.Contains(scrape, secret) {
				t.Error("the metrics hold a token")
			}
		}
	})

	t.Run("a token the backend no longer accepts", func(t *testing.T) {
		manual := connect("b", mcptest.WithCapabilities(urlElicitation), mcptest.WithManualMRTR())
		refused := func(what string) {
			t.Helper()
			site.refuse.Store(true)
			_, err := manual.CallTool(callCtx(t), &mcp.CallToolParams{Name: uoWhoami, Arguments: map[string]any{}})
			site.refuse.Store(false)
			// 502 with -32010 naming the refusal, of which the go-sdk client reports the status.
			if err == nil || !strings.Contains(err.Error(), "Bad Gateway") {
				t.Fatalf("%s: %v", what, err)
			}
		}
		refused("the call with a refused token")
		// The first refusal: the next call, on the other replica, refreshes the token and goes
		// through without asking for consent.
		if got := whoami(t, connect("a", mcptest.WithCapabilities(urlElicitation), mcptest.WithManualMRTR())); got != "sub="+realop.OtherUserID {
			t.Fatalf("after the first refusal: %q", got)
		}
		refused("the call with the refreshed token refused too")
		// Refused again soon after: the record went, the next call asks for consent again.
		site.needsConnect(t, connect("a", mcptest.WithCapabilities(urlElicitation), mcptest.WithManualMRTR()))
	})

	t.Run("an interceptor turns a call into one of a backend not connected", func(t *testing.T) {
		// alice's record went with the refused token: the changed call is refused, not sent to
		// the connect page, and reaches neither backend.
		before, alphaBefore := toolCalls(site.backend.Server), toolCalls(site.alpha)
		res, err := connect("a", mcptest.WithCapabilities(urlElicitation), mcptest.WithManualMRTR()).CallTool(callCtx(t),
			&mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "to-notes"}})
		if err != nil || !res.IsError || res.NeedsInput() || !strings.Contains(mcptest.ResultText(res), "one this caller may not make") {
			t.Fatalf("the changed call: %v %+v", err, res)
		}
		if toolCalls(site.backend.Server) != before || toolCalls(site.alpha) != alphaBefore {
			t.Error("a backend received the refused call")
		}
	})

	t.Run("the store down", func(t *testing.T) { testStoreDown(t, site, connect("a")) })
}

// acceptAtOnce is a 2025-11-25 client's URL elicitation handler: as that revision's URL mode has
// it, it accepts as soon as it has sent its user to the page (here, handed the first URL to the
// test through its pageHandoff), not once the user is done there, and does so again whenever it
// is asked again.
type acceptAtOnce struct {
	*pageHandoff
	asked atomic.Int32
}

func (h *acceptAtOnce) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if req.Params.Mode != "url" || req.Params.URL == "" {
		return nil, fmt.Errorf("not a URL elicitation")
	}
	h.asked.Add(1)
	select {
	case h.pages <- req.Params.URL:
	default: // the test browses the first page only
	}
	return &mcp.ElicitResult{Action: "accept"}, nil
}

// testStoreDown is TestUserOAuthInBrowser's last step: with the vault's store gone, a call
// fails with a retryable error and reaches no backend.
func testStoreDown(t *testing.T, site *userOAuthSite, cs *mcp.ClientSession) {
	site.redis.Pause()
	defer site.redis.Resume()
	before := toolCalls(site.backend.Server)
	res, err := cs.CallTool(callCtx(t), &mcp.CallToolParams{Name: uoWhoami, Arguments: map[string]any{}})
	// 503: the go-sdk client reports the status of the retryable -32014 answer.
	if err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("the call with the store down: %v %+v, want the retryable 503", err, res)
	}
	if n := toolCalls(site.backend.Server); n != before {
		t.Errorf("the backend was called %d times with the store down", n-before)
	}
	// The operator's revocation with the store away: 503 with the count so far, to repeat.
	if got := site.adminRevoke(t, "b", `{"backend":"notes"}`); !strings.HasPrefix(got, "503 ") || !strings.Contains(got, `"revoked":0`) {
		t.Errorf("revocation with the store down: %s, want 503 with the count so far", got)
	}
}
