package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// The approval page under real mouse input (browsertest: input.DispatchMouseEvent at viewport
// coordinates, as a user's mouse makes them).

// baitPage serves, on another origin than the gateway's, a page that asks for a double-click
// on a button placed at x, y, whose mousedown sends the tab to the approval page: the second
// click of the double-click then lands on whatever the approval page has at x, y.
func baitPage(t *testing.T, approvalURL string, x, y float64) string {
	t.Helper()
	page := fmt.Sprintf(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>Prove you are human</title></head>
<body style="margin:0"><p>Double-click the button to continue.</p>
<button id="bait" style="position:absolute;left:%.0fpx;top:%.0fpx;width:220px;height:64px;transform:translate(-50%%,-50%%)">Double-click me</button>
<script>document.getElementById('bait').addEventListener('mousedown', () => { location.href = %q })</script>
</body></html>`, x, y, approvalURL)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// testDoubleClickjacking: a page elsewhere asks for a double-click where Approve will be, and
// its first mousedown sends the tab to the approval page (the user signed in there before, so
// the page shows at once). The second press and release land on Approve. That must not
// approve: Approve is a step whose own confirmation control is elsewhere, and the
// confirmation counts only after a minimum dwell time. Nothing reaches the backend; the client
// is asked again, with the same page.
func testDoubleClickjacking(t *testing.T, browser context.Context, op *realop.Provider, replica approvalReplica,
	alpha *mcptest.Server, tok string, call *mcp.CallToolParams) {
	alpha.Reset()
	cs := mcptest.Connect(t, replica.mcpURL(), mcptest.WithBearer(tok), mcptest.WithCapabilities(urlElicitation),
		mcptest.WithElicitation(mcptest.Decline()), mcptest.WithManualMRTR())
	first := mustNeedApproval(t, cs, call)
	b := browsertest.Tab(t, browser)
	// A window in which the whole call and its buttons fit: the attack needs Approve on screen.
	browsertest.Step(t, b, "viewport", chromedp.EmulateViewport(1000, 1000))
	signInOnPage(t, b, first.url, op.Username())
	// Where Approve is: the attacker knows the page's layout from a call of their own.
	x, y := browsertest.Center(t, b, "#approve")
	browsertest.Step(t, b, "the bait page", chromedp.Navigate(baitPage(t, first.url, x, y)), chromedp.WaitVisible(chromedp.CSS("#bait")))
	browsertest.Mouse(t, b, input.DispatchMouseEventTypeMouseMoved, x, y, 0)
	browsertest.Mouse(t, b, input.DispatchMouseEventTypeMousePressed, x, y, 1)
	// The approval page is there before the second press: the worst case for the user.
	browsertest.WaitFor(t, b, "main.ask #approve")
	browsertest.Mouse(t, b, input.DispatchMouseEventTypeMouseReleased, x, y, 1)
	browsertest.Mouse(t, b, input.DispatchMouseEventTypeMousePressed, x, y, 2)
	browsertest.Mouse(t, b, input.DispatchMouseEventTypeMouseReleased, x, y, 2)
	browsertest.WaitFor(t, b, "main.confirm, main.outcome-approved, main.refused")
	sctx, cancel := context.WithTimeout(b, browsertest.StepTimeout)
	under, err := chromedp.Run(sctx, chromedp.Evaluate[string](fmt.Sprintf(
		`(() => { const e = document.elementFromPoint(%f, %f); return e ? (e.id || e.tagName) : "" })()`, x, y)))
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if under == "confirm" {
		t.Error("the confirmation control is where Approve was: a third click would approve")
	}
	if body := browsertest.Text(t, b, "main"); strings.Contains(body, "Approved") {
		t.Errorf("the double-click approved the call:\n%s", body)
	}
	again := mustNeedApproval(t, cs, retryOf(call, first.state))
	if again.url != first.url {
		t.Errorf("after the double-click the client was asked for %q, want the same page %q", again.url, first.url)
	}
	if n := toolCalls(alpha); n != 0 {
		t.Errorf("backend received %d calls after a double-click elsewhere", n)
	}
	// The user, now reading the page on purpose, can still approve it.
	browsertest.Step(t, b, "back to the page", chromedp.Navigate(first.url))
	browsertest.WaitFor(t, b, "main.ask #approve")
	browsertest.Approve(t, b)
	res, err := cs.CallTool(callCtx(t), retryOf(call, first.state))
	if err != nil || res.IsError || res.NeedsInput() {
		t.Fatalf("retry after a deliberate approval: %v %+v", err, res)
	}
	if n := toolCalls(alpha); n != 1 {
		t.Errorf("backend received %d calls, want exactly 1", n)
	}
}
