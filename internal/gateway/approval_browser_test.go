package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
	"github.com/mcp-gateway/gateway/internal/testsupport/freeport"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// The approval page in a real browser, end to end with the gateway binary: Debian's chromium,
// headless, driven over the DevTools protocol; a real OpenID provider with a login page (the
// zitadel example OP); go-sdk clients and a go-sdk backend; gateway processes started from a
// written configuration file, two of them sharing a real Redis.

const (
	// approvalClientID prefixes the gateway's client ids at the provider, one per page origin.
	approvalClientID = "gateway-approval"
	// approvalClientSecret is the gateway's secret at the provider, written to a file.
	approvalClientSecret = "approval-client-secret"
	// screenshotPath is the checked-in screenshot of the page; UPDATE_SCREENSHOT=1 rewrites it.
	screenshotPath = "../../docs/approval-page.png"
	// approvalCallTimeout bounds one MCP call, including, for a call that waits for the page,
	// the browser's visit and the client's retry.
	approvalCallTimeout = 3 * time.Minute
)

// approvalText is the argument of the call to approve: what a user must be able to read.
const approvalText = "DELETE every invoice of 2025 from the ledger \u202Etxt.exe"

// approvalSite is what the test's gateway processes share: the binary, the directory of their
// configuration, secret and log files, the issuer and the backend.
type approvalSite struct {
	bin   string
	dir   string
	op    *realop.Provider
	alpha *mcptest.Server
	// mrtrKeyFile and clientSecretFile hold the sealing key and the page's client secret, read
	// by the gateways from files as in production.
	mrtrKeyFile, clientSecretFile string
	// drafts is the gateways' server.draftErrors (docs/denials.md); nil for none.
	drafts []string
}

// newApprovalSite builds the gateway binary and writes the shared secret files.
func newApprovalSite(t *testing.T, op *realop.Provider, alpha *mcptest.Server) approvalSite {
	t.Helper()
	dir := t.TempDir()
	return approvalSite{
		bin: buildGatewayBinary(t), dir: dir, op: op, alpha: alpha,
		mrtrKeyFile:      writeSecretFile(t, dir, "mrtr-key", testKeys[0].Secret.Value),
		clientSecretFile: writeSecretFile(t, dir, "approval-client-secret", approvalClientSecret),
	}
}

// approvalReplica is one gateway process with the approval page.
type approvalReplica struct {
	base string // the page's scheme and host, as the browser reaches it
	mcp  string // the MCP listener's address
	proc *gatewayProcess
}

func (r approvalReplica) mcpURL() string { return "http://" + r.mcp + "/mcp" }

// start runs a gateway process named name that trusts the site's provider and asks for
// approval on its page for alpha__echo, with the shared Redis at redisURL ("" for the
// in-memory store) and requestState lifetime ttl (0 for the default). Its page is served at
// http://localhost:PORT: browsers keep Secure cookies for localhost without TLS. ports are its
// MCP and admin ports, picked with every other replica's at once (freeLoopbackPorts). It
// returns once the process is started; waitReady waits for it to serve.
func (s approvalSite) start(t *testing.T, name, redisURL string, ttl time.Duration, ports []int) approvalReplica {
	t.Helper()
	mcpAddr, adminAddr := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	base := fmt.Sprintf("http://localhost:%d", ports[0])
	clientID := fmt.Sprintf("%s-%d", approvalClientID, ports[0])
	s.op.AddWebClient(clientID, approvalClientSecret, base+"/approval/callback")
	mrtr := map[string]any{"keys": []any{map[string]any{"id": testKeys[0].ID, "secret": map[string]any{"file": s.mrtrKeyFile}}}}
	if ttl > 0 {
		mrtr["ttl"] = ttl.String()
	}
	doc := map[string]any{
		"server": map[string]any{"listen": mcpAddr, "publicURL": base + "/mcp", "drainDelay": "0s", "shutdownTimeout": "5s"},
		"admin":  map[string]any{"listen": adminAddr},
		"log":    map[string]any{"level": "info", "format": "text"},
		"auth": map[string]any{
			"issuers": []any{map[string]any{"issuer": s.op.Issuer(), "audiences": []string{realop.UserClientID}}},
			"policy": map[string]any{"rules": []any{
				map[string]any{"id": "echo-approval", "upstream": "alpha", "tools": []string{"echo"}, "confirm": "url"},
				map[string]any{"id": "rest", "upstream": "alpha", "tools": []string{"*"}},
			}},
		},
		"mrtr": mrtr,
		"approval": map[string]any{
			"clientID": clientID, "clientSecret": map[string]any{"file": s.clientSecretFile}, "baseURL": base,
		},
		"upstreams": []any{map[string]any{"name": s.alpha.Name(), "url": s.alpha.URL(), "timeout": "5s"}},
	}
	if redisURL != "" {
		doc["redis"] = map[string]any{"url": redisURL}
	}
	if s.drafts != nil {
		doc["server"].(map[string]any)["draftErrors"] = s.drafts
	}
	config := writeYAML(t, s.dir, name+".yaml", doc)
	return approvalReplica{base: base, mcp: mcpAddr, proc: startGatewayProcess(t, s.bin, name, config, adminAddr)}
}

// signInOnPage opens the approval page, which sends the browser to the provider's login page,
// and signs in there as username; it waits for the page the gateway then shows (main).
func signInOnPage(t *testing.T, ctx context.Context, page, username string) {
	t.Helper()
	browsertest.Step(t, ctx, "sign in",
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), username),
		chromedp.SendKeys(chromedp.CSS("#password"), realop.UserPassword),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("main h1")),
	)
}

// pageHandoff hands the page a client's elicitation handler is sent to over to the test's
// goroutine, and lets the handler answer accept only once the test is done with the page.
// The browser is driven on the test's goroutine, where a failed step may stop the test.
type pageHandoff struct {
	stop    <-chan struct{} // closed when the test ends: a waiting handler gives up
	pages   chan string
	browsed chan struct{}

	mu    sync.Mutex
	asked int
}

func newPageHandoff(t *testing.T) *pageHandoff {
	return &pageHandoff{stop: t.Context().Done(), pages: make(chan string, 1), browsed: make(chan struct{}, 1)}
}

// handler is the client's elicitation handler: the first URL elicitation goes to the test,
// and is accepted once the test has browsed it.
func (h *pageHandoff) handler(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if req.Params.Mode != "url" || req.Params.URL == "" {
		return nil, errors.New("not a URL elicitation")
	}
	h.mu.Lock()
	h.asked++
	n := h.asked
	h.mu.Unlock()
	if n > 1 {
		// Asked again after the page: the decision was not taken; stop the call.
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	h.pages <- req.Params.URL
	select {
	case <-h.browsed:
		return &mcp.ElicitResult{Action: "accept"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-h.stop:
		return nil, errors.New("the test ended")
	}
}

// callThroughPage makes call on cs, whose elicitation handler is h's, runs browse with the
// page the gateway asks for, and returns the outcome of the client's retry.
func callThroughPage(t *testing.T, cs *mcp.ClientSession, h *pageHandoff, call *mcp.CallToolParams, browse func(page string)) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), approvalCallTimeout)
	defer cancel()
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(ctx, call)
		done <- outcome{res, err}
	}()
	select {
	case page := <-h.pages:
		browse(page)
		h.browsed <- struct{}{}
	case o := <-done:
		t.Fatalf("the call ended without asking for the page: %v %+v", o.err, o.res)
	case <-ctx.Done():
		t.Fatalf("the gateway did not ask for the page within %v", approvalCallTimeout)
	}
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		t.Fatalf("no answer to the retry within %v", approvalCallTimeout)
		return nil, nil
	}
}

// callCtx bounds one MCP call that does not wait for the page.
func callCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), approvalCallTimeout)
	t.Cleanup(cancel)
	return ctx
}

var urlElicitation = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}

// TestApprovalInBrowser is the out-of-band approval end to end, with the gateway binary.
func TestApprovalInBrowser(t *testing.T) {
	t.Parallel()
	// The browser first: without chromium the test fails at once, before the build.
	browser := browsertest.New(t)
	op := realop.Start(t, realop.Options{})
	redis := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	site := newApprovalSite(t, op, alpha)
	// Every replica's ports are picked at once: picked one replica at a time, a port freed for
	// one replica's admin listener could be handed out again for the next one's MCP listener
	// before the first had bound it (seen: replica-a's admin listener "address already in use").
	ports := freeport.Loopback(t, 6)
	replicaA := site.start(t, "replica-a", redis.URL(), 0, ports[0:2])
	replicaB := site.start(t, "replica-b", redis.URL(), 0, ports[2:4])
	// expiring asks for approvals that expire within a second, with its own in-memory store.
	const shortTTL = time.Second
	expiring := site.start(t, "expiring", "", shortTTL, ports[4:6])
	for _, r := range []approvalReplica{replicaA, replicaB, expiring} {
		r.proc.waitReady(t)
	}
	tok, err := op.UserToken(callCtx(t), op.Username(), realop.UserPassword)
	if err != nil {
		t.Fatal(err)
	}
	call := &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": approvalText}}

	t.Run("approve", func(t *testing.T) {
		alpha.Reset()
		h := newPageHandoff(t)
		cs := mcptest.Connect(t, replicaA.mcpURL(), mcptest.WithBearer(tok), mcptest.WithCapabilities(urlElicitation),
			mcptest.WithElicitation(h.handler))
		res, err := callThroughPage(t, cs, h, call, func(page string) {
			if !strings.HasPrefix(page, replicaA.base+"/approval/c/") {
				t.Errorf("page URL %q is not on the gateway's page path", page)
			}
			if toolCalls(alpha) != 0 {
				t.Error("the backend was reached before the approval")
			}
			b := browsertest.Tab(t, browser)
			signInOnPage(t, b, page, op.Username())
			body := browsertest.Text(t, b, "main")
			for _, want := range []string{"Approve this tool call?", "alpha__echo", "alpha", "DELETE every invoice of 2025",
				"U+202E", realop.UserID, "mcptest-client", "Returns text unchanged."} {
				if !strings.Contains(body, want) {
					t.Errorf("the page does not show %q:\n%s", want, body)
				}
			}
			checkPhoneLayout(t, b)
			saveScreenshot(t, b)
			browsertest.Approve(t, b)
		})
		if err != nil || res.IsError || mcptest.ResultText(res) != approvalText {
			t.Fatalf("approved call: %v %+v", err, res)
		}
		if n := toolCalls(alpha); n != 1 {
			t.Errorf("backend received %d calls, want exactly 1", n)
		}
		// The retry's answers were the gateway's (the user came back from the page): the
		// backend gets the approved call alone, no answers it did not ask for.
		for _, ex := range alpha.RequestsOf("tools/call") {
			if strings.Contains(string(ex.Body), "inputResponses") || strings.Contains(string(ex.Body), "io.mcp-gateway/confirm") {
				t.Errorf("the backend received the client's answers to the gateway: %s", ex.Body)
			}
		}
	})

	t.Run("a double-click elsewhere does not approve", func(t *testing.T) {
		testDoubleClickjacking(t, browser, op, replicaA, alpha, tok, call)
	})

	t.Run("deny", func(t *testing.T) {
		alpha.Reset()
		h := newPageHandoff(t)
		cs := mcptest.Connect(t, replicaA.mcpURL(), mcptest.WithBearer(tok), mcptest.WithCapabilities(urlElicitation),
			mcptest.WithElicitation(h.handler))
		res, err := callThroughPage(t, cs, h, call, func(page string) {
			b := browsertest.Tab(t, browser)
			signInOnPage(t, b, page, op.Username())
			browsertest.ClickOn(t, b, "#deny")
			browsertest.WaitFor(t, b, "main.outcome-denied")
		})
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
		b := browsertest.Tab(t, browser)
		signInOnPage(t, b, first.url, realop.OtherUsername)
		body := browsertest.Text(t, b, "main")
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
		b := browsertest.Tab(t, browser)
		signInOnPage(t, b, first.url, op.Username())
		// The signed-in user's own browser posts Approve without the token (DevTools evaluation
		// is not bound by the page's CSP, which would stop any script of the page itself).
		sctx, cancel := context.WithTimeout(b, browsertest.StepTimeout)
		_, err := chromedp.Run(sctx, chromedp.Evaluate[bool](`(() => { for (const i of document.querySelectorAll('input[name=csrf]')) i.remove(); document.getElementById('approve').click(); return true })()`))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		browsertest.Step(t, b, "refusal", chromedp.WaitVisible(chromedp.CSS("main.refused")))
		if body := browsertest.Text(t, b, "main"); !strings.Contains(body, "was not recorded") {
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
		b := browsertest.Tab(t, browser)
		signInOnPage(t, b, first.url, op.Username())
		sctx, cancel := context.WithTimeout(b, browsertest.StepTimeout)
		token, err := chromedp.Run(sctx, chromedp.Evaluate[string](`document.querySelector('input[name=csrf]').value`))
		cancel()
		if err != nil || token == "" {
			t.Fatalf("reading the form's token: %q %v", token, err)
		}
		browsertest.Approve(t, b)
		// The decision POST replayed with its valid token, now saying deny: the first stands.
		replay := fmt.Sprintf(`(() => { const f = document.createElement('form'); f.method = 'post'; f.action = %q;
			for (const [k, v] of [['csrf', %q], ['decision', 'deny']]) { const i = document.createElement('input');
			i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i) } document.body.appendChild(f); f.submit(); return true })()`,
			strings.TrimPrefix(first.url, replicaA.base), token)
		sctx, cancel = context.WithTimeout(b, browsertest.StepTimeout)
		_, err = chromedp.Run(sctx, chromedp.Evaluate[bool](replay))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		waitText(t, b, "the first decision stands")
		// The retry goes to replica B, which reads A's decision from the shared store.
		res, err := csB.CallTool(callCtx(t), retryOf(call, first.state))
		if err != nil || res.IsError || res.NeedsInput() || mcptest.ResultText(res) != approvalText {
			t.Fatalf("retry on replica B: %v %+v", err, res)
		}
		// The same retry replayed, on either replica, is refused and never forwarded.
		for _, cs := range []*mcp.ClientSession{csA, csB} {
			if res, err := cs.CallTool(callCtx(t), retryOf(call, first.state)); err == nil {
				t.Errorf("replayed retry answered %+v", res)
			} else if !strings.Contains(err.Error(), "Invalid requestState") {
				t.Errorf("replayed retry: %v", err)
			}
		}
		if n := toolCalls(alpha); n != 1 {
			t.Errorf("backend received %d calls, want exactly 1", n)
		}
	})

	// A page opened after the call expired says so and records nothing; the client's retry is
	// then asked again, with a new page.
	t.Run("expired page", func(t *testing.T) {
		alpha.Reset()
		late := &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "late"}}
		cs := mcptest.Connect(t, expiring.mcpURL(), mcptest.WithBearer(tok), mcptest.WithCapabilities(urlElicitation),
			mcptest.WithElicitation(mcptest.Decline()), mcptest.WithManualMRTR())
		first := mustNeedApproval(t, cs, late)
		time.Sleep(shortTTL + 200*time.Millisecond) // past the state's expiry, whatever the machine's speed
		b := browsertest.Tab(t, browser)
		signInOnPage(t, b, first.url, op.Username())
		body := browsertest.Text(t, b, "main")
		if !strings.Contains(body, "expired") || countNodes(t, b, "#approve") != 0 {
			t.Errorf("page after expiry:\n%s", body)
		}
		again := mustNeedApproval(t, cs, retryOf(late, first.state))
		if again.url == first.url || again.state == first.state {
			t.Error("an expired call was not asked again with a new page")
		}
		if toolCalls(alpha) != 0 {
			t.Error("backend reached")
		}
	})
}

// approvalAsk is an input_required result's page URL and requestState.
type approvalAsk struct{ url, state string }

// mustNeedApproval calls with a client that does not retry by itself and returns the approval
// page the gateway asked for.
func mustNeedApproval(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) approvalAsk {
	t.Helper()
	res, err := cs.CallTool(callCtx(t), params)
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
	deadline := time.Now().Add(browsertest.StepTimeout)
	for {
		sctx, cancel := context.WithTimeout(ctx, browsertest.StepTimeout)
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

// countNodes is how many elements sel matches on the tab's page.
func countNodes(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browsertest.StepTimeout)
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
	browsertest.Step(t, ctx, "phone viewport", chromedp.EmulateViewport(390, 844))
	sctx, cancel := context.WithTimeout(ctx, browsertest.StepTimeout)
	defer cancel()
	fits, err := chromedp.Run(sctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if !fits {
		t.Error("the page scrolls sideways on a phone")
	}
	browsertest.Step(t, ctx, "desktop viewport", chromedp.EmulateViewport(1000, 720))
}

// saveScreenshot keeps a screenshot of the page with the test's files, and replaces the
// checked-in one when UPDATE_SCREENSHOT=1.
func saveScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browsertest.StepTimeout)
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
