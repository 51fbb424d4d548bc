// Package browsertest drives a real, headless browser (Debian's chromium, over the DevTools
// protocol with chromedp) for tests in which a person acts on a page: signing in at an issuer,
// approving a call on the gateway's approval page. Chromium is required like redis-server:
// .ci/setup installs it, and a missing browser fails the test instead of skipping it.
package browsertest

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// StepTimeout bounds one browser step (a navigation, a sign-in, a click), generous for a busy
// machine.
const StepTimeout = 60 * time.Second

// New starts headless chromium for the test and returns its browser context; it stops when
// the test ends.
func New(t testing.TB) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is required (apt-get install chromium; .ci/setup installs it): %v", err)
	}
	// TMPDIR: chromium keeps its singleton socket in a directory of its own under it, which it
	// cannot remove when the test ends it; the test's temporary directory is removed after it.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1000, 720),
		chromedp.Env("TMPDIR="+t.TempDir()))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	if err := openBounded(bctx, cancelBrowser); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return bctx
}

// openBounded makes the first run of a chromedp context, which starts the browser or opens
// the tab, within StepTimeout. That run must use ctx itself, whose lifetime the browser or tab
// then has, so it is bounded by cancelling ctx rather than by a deadline on it.
func openBounded(ctx context.Context, cancel context.CancelFunc) error {
	timer := time.AfterFunc(StepTimeout, cancel)
	err := chromedp.Do(ctx)
	if !timer.Stop() {
		return fmt.Errorf("not open within %v", StepTimeout)
	}
	return err
}

// Tab opens a tab in a fresh browser context of browser: its own cookies, like a private
// window.
func Tab(t testing.TB, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := openBounded(ctx, cancel); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return ctx
}

// Step runs browser actions within StepTimeout, failing the test on an error.
func Step(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// Text is the visible text of the first element sel matches, read within StepTimeout.
func Text(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	s, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("browser: reading %s: %v", sel, err)
	}
	return s
}
