package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// The approval page under real mouse input: every click here is a pair of
// input.DispatchMouseEvent calls at viewport coordinates, as a user's mouse makes them, never a
// script calling click() on an element.

// approvalDwell is how long a deliberate user looks at the confirmation step before clicking:
// more than the page's minimum dwell time (approval.MinDwell).
const approvalDwell = 1500 * time.Millisecond

// center returns the viewport coordinates of the middle of the first element sel matches.
func center(t *testing.T, ctx context.Context, sel string) (x, y float64) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	defer cancel()
	xy, err := chromedp.Run(sctx, chromedp.Evaluate[[]float64](fmt.Sprintf(
		`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] })()`, sel)))
	if err != nil || len(xy) != 2 {
		t.Fatalf("browser: locating %s: %v", sel, err)
	}
	return xy[0], xy[1]
}

// mouse dispatches one mouse event of the left button at x, y; clicks is its click count (2 for
// the second press of a double-click).
func mouse(t *testing.T, ctx context.Context, typ input.DispatchMouseEventType, x, y float64, clicks int) {
	t.Helper()
	step(t, ctx, string(typ), chromedp.MouseEvent(typ, x, y, chromedp.ButtonLeft, chromedp.ClickCount(clicks)))
}

// clickOn scrolls sel into view, as a user would, moves the mouse to its middle and clicks
// there once.
func clickOn(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, browserStepTimeout)
	_, err := chromedp.Run(sctx, chromedp.Evaluate[bool](fmt.Sprintf(
		`(() => { document.querySelector(%q).scrollIntoView({block: "center"}); return true })()`, sel)))
	cancel()
	if err != nil {
		t.Fatalf("browser: scrolling to %s: %v", sel, err)
	}
	x, y := center(t, ctx, sel)
	mouse(t, ctx, input.DispatchMouseEventTypeMouseMoved, x, y, 0)
	mouse(t, ctx, input.DispatchMouseEventTypeMousePressed, x, y, 1)
	mouse(t, ctx, input.DispatchMouseEventTypeMouseReleased, x, y, 1)
}

// waitFor waits, bounded, until the tab's page has an element matching sel.
func waitFor(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	step(t, ctx, "waiting for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
}

// approveOnPage approves the call shown in the tab as a user does: Approve, then, once the
// confirmation step has been on screen for a while, its own Approve control.
func approveOnPage(t *testing.T, ctx context.Context) {
	t.Helper()
	clickOn(t, ctx, "#approve")
	waitFor(t, ctx, "main.confirm #confirm")
	time.Sleep(approvalDwell) // a user reading the confirmation, not a timing under test
	clickOn(t, ctx, "#confirm")
	waitFor(t, ctx, "main.outcome-approved")
}

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
	b := tab(t, browser)
	// A window in which the whole call and its buttons fit: the attack needs Approve on screen.
	step(t, b, "viewport", chromedp.EmulateViewport(1000, 1000))
	signInOnPage(t, b, first.url, op.Username())
	// Where Approve is: the attacker knows the page's layout from a call of their own.
	x, y := center(t, b, "#approve")
	step(t, b, "the bait page", chromedp.Navigate(baitPage(t, first.url, x, y)), chromedp.WaitVisible(chromedp.CSS("#bait")))
	mouse(t, b, input.DispatchMouseEventTypeMouseMoved, x, y, 0)
	mouse(t, b, input.DispatchMouseEventTypeMousePressed, x, y, 1)
	// The approval page is there before the second press: the worst case for the user.
	waitFor(t, b, "main.ask #approve")
	mouse(t, b, input.DispatchMouseEventTypeMouseReleased, x, y, 1)
	mouse(t, b, input.DispatchMouseEventTypeMousePressed, x, y, 2)
	mouse(t, b, input.DispatchMouseEventTypeMouseReleased, x, y, 2)
	waitFor(t, b, "main.confirm, main.outcome-approved, main.refused")
	sctx, cancel := context.WithTimeout(b, browserStepTimeout)
	under, err := chromedp.Run(sctx, chromedp.Evaluate[string](fmt.Sprintf(
		`(() => { const e = document.elementFromPoint(%f, %f); return e ? (e.id || e.tagName) : "" })()`, x, y)))
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if under == "confirm" {
		t.Error("the confirmation control is where Approve was: a third click would approve")
	}
	if body := text(t, b, "main"); strings.Contains(body, "Approved") {
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
	step(t, b, "back to the page", chromedp.Navigate(first.url))
	waitFor(t, b, "main.ask #approve")
	approveOnPage(t, b)
	res, err := cs.CallTool(callCtx(t), retryOf(call, first.state))
	if err != nil || res.IsError || res.NeedsInput() {
		t.Fatalf("retry after a deliberate approval: %v %+v", err, res)
	}
	if n := toolCalls(alpha); n != 1 {
		t.Errorf("backend received %d calls, want exactly 1", n)
	}
}
