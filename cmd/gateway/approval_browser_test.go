package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/mcptest"
	"github.com/mcp-gateway/gateway/internal/realop"
	"github.com/mcp-gateway/gateway/internal/testredis"
)

// The approval page in a real browser: Debian's chromium, headless, driven over the DevTools
// protocol; a real OpenID provider with a login page (the zitadel example OP); go-sdk clients
// and a go-sdk backend; two gateways sharing a real Redis.

const (
	approvalClientID     = "gateway-approval"
	approvalClientSecret = "approval-client-secret"
	// screenshotPath is the checked-in screenshot of the page; UPDATE_SCREENSHOT=1 rewrites it.
	screenshotPath = "../../docs/approval-page.png"
	// browserStepTimeout bounds one browser step (navigation, sign-in, a click).
	browserStepTimeout = 60 * time.Second
)

// approvalArgs are the arguments of the call to approve: what a user must be able to read.
const approvalText = "DELETE every invoice of 2025 from the ledger \u202Etxt.exe"

// freeLoopbackPort returns a port free on 127.0.0.1 now, so a gateway's public URL (which the
// issuer must know as a redirect URI) can be fixed before the gateway starts.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// approvalReplica is one gateway with the approval page.
type approvalReplica struct {
	base string // the page's scheme and host, as the browser reaches it
	gw   listeners
}

func (r approvalReplica) mcpURL() string { return "http://" + r.gw.MCP + "/mcp" }

// startApprovalReplica starts a gateway trusting op, asking for approval on its page for
// alpha__echo, with the shared Redis at redisURL ("" for the in-memory store) and requestState
// lifetime ttl. Its page is served at http://localhost:PORT: browsers keep Secure cookies for
// localhost without TLS.
func startApprovalReplica(t *testing.T, op *realop.Provider, redisURL string, ttl time.Duration, alpha *mcptest.Server) approvalReplica {
	t.Helper()
	port := freeLoopbackPort(t)
	base := fmt.Sprintf("http://localhost:%d", port)
	op.AddWebClient(approvalClientID+fmt.Sprint(port), approvalClientSecret, base+"/approval/callback")
	gw := startTestGateway(t, func(c *Config) {
		c.Server.Listen = fmt.Sprintf("127.0.0.1:%d", port)
		c.Auth.Disabled = false
		c.Server.PublicURL = base + "/mcp"
		c.Auth.Issuers = []authz.IssuerConfig{{Issuer: op.Issuer(), Audiences: []string{realop.UserClientID}}}
		c.MRTR.Keys = testKeys
		c.MRTR.TTL = ttl
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "echo-approval", Upstream: "alpha", Tools: []string{"echo"}, Confirm: authz.ConfirmURL},
			{ID: "rest", Upstream: "alpha", Tools: []string{"*"}},
		}
		c.Approval.ClientID = approvalClientID + fmt.Sprint(port)
		c.Approval.ClientSecret = Secret{Value: approvalClientSecret}
		c.Approval.BaseURL = base
		c.Redis.URL = redisURL
	}, alpha)
	return approvalReplica{base: base, gw: gw}
}

// newBrowser starts headless chromium for the test. It is required, like redis-server and
// haproxy for other tests: .ci/setup installs it.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is required (apt-get install chromium; .ci/setup installs it): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1000, 720))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return bctx
}

// tab opens a tab in a fresh browser context: its own cookies, like a private window.
func tab(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The first run opens the tab, which lives as long as the context of that run: this one,
	// not a step's bounded one.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return ctx
}

// step runs browser actions with a bounded time.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	s, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("browser: reading %s: %v", sel, err)
	}
	return s
}

// signInOnPage opens the approval page, which sends the browser to the provider's login page,
// and signs in there as username; it waits for the page the gateway then shows (main).
func signInOnPage(t *testing.T, ctx context.Context, page, username string) {
	t.Helper()
	step(t, ctx, "sign in",
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), username),
		chromedp.SendKeys(chromedp.CSS("#password"), realop.UserPassword),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("main h1")),
	)
}

// elicited records the URL elicitations a client received and answers them with accept once
// browse has run for the URL.
type elicited struct {
	mu   sync.Mutex
	urls []string
}

func (e *elicited) handler(t *testing.T, browse func(url string)) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if req.Params.Mode != "url" || req.Params.URL == "" {
			return nil, errors.New("not a URL elicitation")
		}
		e.mu.Lock()
		e.urls = append(e.urls, req.Params.URL)
		n := len(e.urls)
		e.mu.Unlock()
		if n > 1 {
			// Asked again after the page: the decision was not taken; stop the call.
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
		browse(req.Params.URL)
		return &mcp.ElicitResult{Action: "accept"}, nil
	}
}

var urlElicitation = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}

// TestApprovalInBrowser is the out-of-band approval end to end.
func TestApprovalInBrowser(t *testing.T) {
	browser := newBrowser(t)
	op := realop.Start(t, realop.Options{})
	redis := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	replicaA := startApprovalReplica(t, op, redis.URL(), 0, alpha)
	replicaB := startApprovalReplica(t, op, redis.URL(), 0, alpha)
	ctx := context.Background()
	tok, err := op.UserToken(ctx, op.Username(), realop.UserPassword)
	if err != nil {
		t.Fatal(err)
	}
	call := &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": approvalText}}

	t.Run("approve", func(t *testing.T) {
		alpha.Reset()
		var e elicited
		cs := mcptest.Connect(t, replicaA.mcpURL(), mcptest.WithBearer(tok), mcptest.WithCapabilities(urlElicitation),
			mcptest.WithElicitation(e.handler(t, func(page string) {
				if !strings.HasPrefix(page, replicaA.base+"/approval/c/") {
					t.Errorf("page URL %q is not on the gateway's page path", page)
				}
				if toolCalls(alpha) != 0 {
					t.Error("the backend was reached before the approval")
				}
				b := tab(t, browser)
				signInOnPage(t, b, page, op.Username())
				body := text(t, b, "main")
				for _, want := range []string{"Approve this tool call?", "alpha__echo", "alpha", "DELETE every invoice of 2025",
					"U+202E", realop.UserID, "mcptest-client", "Returns text unchanged."} {
					if !strings.Contains(body, want) {
						t.Errorf("the page does not show %q:\n%s", want, body)
					}
				}
				checkPhoneLayout(t, b)
				saveScreenshot(t, b)
				step(t, b, "approve", chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS("main.outcome-approved")))
			})))
		res, err := cs.CallTool(ctx, call)
		if err != nil || res.IsError || mcptest.ResultText(res) != approvalText {
			t.Fatalf("approved call: %v %+v", err, res)
		}
		if n := toolCalls(alpha); n != 1 {
			t.Errorf("backend received %d calls, want exactly 1", n)
		}
	})

	t.Run("deny", func(t *testing.T) {
		alpha.Reset()
		var e elicited
		cs := mcptest.Connect(t, replicaA.mcpURL(), mcptest.WithBearer(tok), mcptest.WithCapabilities(urlElicitation),
			mcptest.WithElicitation(e.handler(t, func(page string) {
				b := tab(t, browser)
				signInOnPage(t, b, page, op.Username())
				step(t, b, "deny", chromedp.Click(chromedp.CSS("#deny")), chromedp.WaitVisible(chromedp.CSS("main.outcome-denied")))
			})))
		res, err := cs.CallTool(ctx, call)
		if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "did not approve") {
			t.Fatalf("denied call: %v %+v", err, res)
		}
		if n := toolCalls(alpha); n != 0 {
			t.Errorf("backend received %d calls after a denial", n)
		}
	})

	t.Run("another user is refused", func(t *testing.T) {
		alpha.Reset()
		cs := mcptest.Connect(t, replicaA.mcpURL(), mcptest.WithBearer(tok), mcptest.WithCapabilities(urlElicitation),
			mcptest.WithElicitation(mcptest.Decline()), mcptest.WithManualMRTR())
		first := mustNeedApproval(t, cs, call)
		b := tab(t, browser)
		signInOnPage(t, b, first.url, realop.OtherUsername)
		body := text(t, b, "main")
		if !strings.Contains(body, "Not your call") || !strings.Contains(body, realop.OtherUserID) {
			t.Errorf("another user's page:\n%s", body)
		}
		if n := countNodes(t, b, "#approve"); n != 0 {
			t.Error("another user is offered the Approve button")
		}
		// Nothing was recorded: the retry is asked again, with the same page.
		again := mustNeedApproval(t, cs, retryOf(call, first.state))
		if again.url != first.url || toolCalls(alpha) != 0 {
			t.Errorf("after another user's visit: url %q (first %q), backend calls %d", again.url, first.url, toolCalls(alpha))
		}
	})

	t.Run("forged decision without the CSRF token", func(t *testing.T) {
		alpha.Reset()
		cs := mcptest.Connect(t, replicaA.mcpURL(), mcptest.WithBearer(tok), mcptest.WithCapabilities(urlElicitation),
			mcptest.WithElicitation(mcptest.Decline()), mcptest.WithManualMRTR())
		first := mustNeedApproval(t, cs, call)
		b := tab(t, browser)
		signInOnPage(t, b, first.url, op.Username())
		// The signed-in user's own browser posts Approve without the token (DevTools evaluation
		// is not bound by the page's CSP, which would stop any script of the page itself).
		sctx, cancel := context.WithTimeout(b, browserStepTimeout)
		_, err := chromedp.Run(sctx, chromedp.Evaluate[bool](`(() => { for (const i of document.querySelectorAll('input[name=csrf]')) i.remove(); document.getElementById('approve').click(); return true })()`))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		step(t, b, "refusal", chromedp.WaitVisible(chromedp.CSS("main.refused")))
		if body := text(t, b, "main"); !strings.Contains(body, "was not recorded") {
			t.Errorf("forged post:\n%s", body)
		}
		again := mustNeedApproval(t, cs, retryOf(call, first.state))
		if again.url != first.url || toolCalls(alpha) != 0 {
			t.Errorf("after a forged post: backend calls %d", toolCalls(alpha))
		}
	})

	t.Run("replayed approval, and a retry on another replica", func(t *testing.T) {
		alpha.Reset()
		csA := mcptest.Connect(t, replicaA.mcpURL(), mcptest.WithBearer(tok), mcptest.WithCapabilities(urlElicitation),
			mcptest.WithElicitation(mcptest.Decline()), mcptest.WithManualMRTR())
		csB := mcptest.Connect(t, replicaB.mcpURL(), mcptest.WithBearer(tok), mcptest.WithCapabilities(urlElicitation),
			mcptest.WithElicitation(mcptest.Decline()), mcptest.WithManualMRTR())
		first := mustNeedApproval(t, csA, call)
		b := tab(t, browser)
		signInOnPage(t, b, first.url, op.Username())
		sctx, cancel := context.WithTimeout(b, browserStepTimeout)
		token, err := chromedp.Run(sctx, chromedp.Evaluate[string](`document.querySelector('input[name=csrf]').value`))
		cancel()
		if err != nil || token == "" {
			t.Fatalf("reading the form's token: %q %v", token, err)
		}
		step(t, b, "approve on replica A", chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS("main.outcome-approved")))
		// The decision POST replayed with its valid token, now saying deny: the first stands.
		replay := fmt.Sprintf(`(() => { const f = document.createElement('form'); f.method = 'post'; f.action = %q;
			for (const [k, v] of [['csrf', %q], ['decision', 'deny']]) { const i = document.createElement('input');
			i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i) } document.body.appendChild(f); f.submit(); return true })()`,
			strings.TrimPrefix(first.url, replicaA.base), token)
		sctx, cancel = context.WithTimeout(b, browserStepTimeout)
		_, err = chromedp.Run(sctx, chromedp.Evaluate[bool](replay))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		waitText(t, b, "the first decision stands")
		// The retry goes to replica B, which reads A's decision from the shared store.
		res, err := csB.CallTool(ctx, retryOf(call, first.state))
		if err != nil || res.IsError || res.NeedsInput() || mcptest.ResultText(res) != approvalText {
			t.Fatalf("retry on replica B: %v %+v", err, res)
		}
		// The same retry replayed, on either replica, is refused and never forwarded.
		for _, cs := range []*mcp.ClientSession{csA, csB} {
			if res, err := cs.CallTool(ctx, retryOf(call, first.state)); err == nil {
				t.Errorf("replayed retry answered %+v", res)
			} else if !strings.Contains(err.Error(), "Invalid requestState") {
				t.Errorf("replayed retry: %v", err)
			}
		}
		if n := toolCalls(alpha); n != 1 {
			t.Errorf("backend received %d calls, want exactly 1", n)
		}
	})
}

// TestApprovalPageExpired: a page opened after the call expired says so and records nothing;
// the client's retry is then asked again, with a new page.
func TestApprovalPageExpired(t *testing.T) {
	browser := newBrowser(t)
	op := realop.Start(t, realop.Options{})
	alpha := mcptest.StartServer(t, "alpha")
	const ttl = time.Second
	replica := startApprovalReplica(t, op, "", ttl, alpha)
	tok, err := op.UserToken(context.Background(), op.Username(), realop.UserPassword)
	if err != nil {
		t.Fatal(err)
	}
	call := &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "late"}}
	cs := mcptest.Connect(t, replica.mcpURL(), mcptest.WithBearer(tok), mcptest.WithCapabilities(urlElicitation),
		mcptest.WithElicitation(mcptest.Decline()), mcptest.WithManualMRTR())
	first := mustNeedApproval(t, cs, call)
	time.Sleep(ttl + 200*time.Millisecond) // past the state's expiry, whatever the machine's speed
	b := tab(t, browser)
	signInOnPage(t, b, first.url, op.Username())
	body := text(t, b, "main")
	if !strings.Contains(body, "expired") || countNodes(t, b, "#approve") != 0 {
		t.Errorf("page after expiry:\n%s", body)
	}
	again := mustNeedApproval(t, cs, retryOf(call, first.state))
	if again.url == first.url || again.state == first.state {
		t.Error("an expired call was not asked again with a new page")
	}
	if toolCalls(alpha) != 0 {
		t.Error("backend reached")
	}
}

// approvalAsk is an input_required result's page URL and requestState.
type approvalAsk struct{ url, state string }

// mustNeedApproval calls with a client that does not retry by itself and returns the approval
// page the gateway asked for.
func mustNeedApproval(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) approvalAsk {
	t.Helper()
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || !res.NeedsInput() {
		t.Fatalf("expected input_required: %v %+v", err, res)
	}
	req, ok := res.InputRequests["io.mcp-gateway/confirm"]
	if !ok {
		t.Fatalf("no confirmation request in %+v", res.InputRequests)
	}
	p, ok := req.(*mcp.ElicitParams)
	if !ok || p.Mode != "url" || p.URL == "" || p.ElicitationID == "" {
		t.Fatalf("not a URL elicitation: %#v", req)
	}
	return approvalAsk{url: p.URL, state: res.RequestState}
}

// retryOf is the client's retry after the page: action accept, no content.
func retryOf(call *mcp.CallToolParams, state string) *mcp.CallToolParams {
	r := *call
	r.RequestState = state
	r.InputResponses = mcp.InputResponseMap{"io.mcp-gateway/confirm": &mcp.ElicitResult{Action: "accept"}}
	return &r
}

// waitText waits, bounded, until the tab's page shows want: after a navigation the old page
// may still be there for a while.
func waitText(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	deadline := time.Now().Add(browserStepTimeout)
	for {
		sctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
		body, err := chromedp.Run(sctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		cancel()
		if err == nil && strings.Contains(body, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed %q; last: %v\n%s", want, err, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func countNodes(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	n, err := chromedp.Run(sctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkPhoneLayout: at a phone's width the page needs no horizontal scrolling.
func checkPhoneLayout(t *testing.T, ctx context.Context) {
	t.Helper()
	step(t, ctx, "phone viewport", chromedp.EmulateViewport(390, 844))
	sctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	fits, err := chromedp.Run(sctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if !fits {
		t.Error("the page scrolls sideways on a phone")
	}
	step(t, ctx, "desktop viewport", chromedp.EmulateViewport(1000, 720))
}

// saveScreenshot keeps a screenshot of the page with the test's files, and replaces the
// checked-in one when UPDATE_SCREENSHOT=1.
func saveScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "approval-page.png")
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", out)
	if os.Getenv("UPDATE_SCREENSHOT") == "1" {
		if err := os.WriteFile(screenshotPath, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
