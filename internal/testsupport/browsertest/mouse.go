package browsertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/mcp-gateway/gateway/internal/approval"
)

// The mouse as a user moves it: every click is a press and a release of the left button at
// viewport coordinates (input.DispatchMouseEvent), never a script calling click() on an element,
// so what the page draws where the pointer lands is what gets clicked.

// Dwell is how long a deliberate user looks at a page of the gateway (the approval page's
// confirmation step, the connect pages) before clicking: more than their minimum dwell time
// (approval.MinDwell, webpage.MinDwell).
const Dwell = approval.MinDwell + 500*time.Millisecond

// Center returns the viewport coordinates of the middle of the first element sel matches.
func Center(t testing.TB, ctx context.Context, sel string) (x, y float64) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	xy, err := chromedp.Run(sctx, chromedp.Evaluate[[]float64](fmt.Sprintf(
		`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] })()`, sel)))
	if err != nil || len(xy) != 2 {
		t.Fatalf("browser: locating %s: %v", sel, err)
	}
	return xy[0], xy[1]
}

// Mouse dispatches one event of the left button at x, y; clicks is its click count (2 for the
// second press of a double-click, 0 for a move).
func Mouse(t testing.TB, ctx context.Context, typ input.DispatchMouseEventType, x, y float64, clicks int) {
	t.Helper()
	Step(t, ctx, string(typ), chromedp.MouseEvent(typ, x, y, chromedp.ButtonLeft, chromedp.ClickCount(clicks)))
}

// ClickOn scrolls sel into view, as a user would, moves the mouse to its middle and clicks
// there once.
func ClickOn(t testing.TB, ctx context.Context, sel string) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, StepTimeout)
	_, err := chromedp.Run(sctx, chromedp.Evaluate[bool](fmt.Sprintf(
		`(() => { document.querySelector(%q).scrollIntoView({block: "center"}); return true })()`, sel)))
	cancel()
	if err != nil {
		t.Fatalf("browser: scrolling to %s: %v", sel, err)
	}
	x, y := Center(t, ctx, sel)
	Mouse(t, ctx, input.DispatchMouseEventTypeMouseMoved, x, y, 0)
	Mouse(t, ctx, input.DispatchMouseEventTypeMousePressed, x, y, 1)
	Mouse(t, ctx, input.DispatchMouseEventTypeMouseReleased, x, y, 1)
}

// WaitFor waits, within StepTimeout, until the page has a visible element matching sel.
func WaitFor(t testing.TB, ctx context.Context, sel string) {
	t.Helper()
	Step(t, ctx, "waiting for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
}

// Approve approves the call the approval page in ctx shows, as a user does: Approve, then,
// once the confirmation step has been on screen for a while, its own Approve control.
func Approve(t testing.TB, ctx context.Context) {
	t.Helper()
	ClickOn(t, ctx, "#approve")
	WaitFor(t, ctx, "main.confirm #confirm")
	time.Sleep(Dwell) // a user reading the confirmation, not a timing under test
	ClickOn(t, ctx, "#confirm")
	WaitFor(t, ctx, "main.outcome-approved")
}
