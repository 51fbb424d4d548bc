package approval_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// TestPageShowsMemberNamesAsSent: in a real browser, every member name of the arguments and of
// the members also sent to the backend reads exactly as the backend receives it, between quote
// marks: leading, trailing and repeated spaces and line breaks are kept, so that "dryRun " (an
// argument the backend does not know, and ignores) never reads as "dryRun" beside a value the
// person approves on its account, and an empty name is a visible "". Before, names were laid out
// as ordinary HTML text, which collapses white space: "dryRun ", " dryRun" and "dryRun", or
// "dry  Run" and "dry Run", read alike.
func TestPageShowsMemberNamesAsSent(t *testing.T) {
	names := []string{"dryRun", "dryRun ", " dryRun", "dry  Run", "dry Run", "dry\nRun", "", "  "}
	obj := make([]string, len(names))
	for i, n := range names {
		k, _ := json.Marshal(n)
		obj[i] = string(k) + ":" + string(rune('0'+i))
	}
	args := "{" + strings.Join(obj, ",") + "}"
	page := approval.RenderAskPage(t, approval.Call{ID: strings.Repeat("a", 32), Issuer: "https://issuer.example", Subject: "alice",
		Upstream: "files", Tool: "files__delete", UpstreamTool: "delete", Arguments: []byte(args),
		Forwarded: []byte(args), Expiry: time.Now().Add(time.Minute)})
	url := servePage(t, page)

	tab := browsertest.Tab(t, browsertest.New(t))
	browsertest.Step(t, tab, "open the page", chromedp.Navigate(url))
	for _, section := range []string{"#arguments", "#forwarded"} {
		// innerText is the text as laid out, white space collapsed or kept as the page's style
		// says; the quote marks are the style's generated content.
		type name struct{ Text, Before, After string }
		ctx, cancel := context.WithTimeout(tab, browsertest.StepTimeout)
		shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]name](`[...document.querySelectorAll('`+section+` dt')].map(dt => {
			const e = dt.firstElementChild && dt.firstElementChild.matches('.s') ? dt.firstElementChild : dt;
			return {Text: e.innerText, Before: getComputedStyle(e, '::before').content, After: getComputedStyle(e, '::after').content};
		})`))
		cancel()
		if err != nil {
			t.Fatalf("reading %s: %v", section, err)
		}
		if len(shown) != len(names) {
			t.Fatalf("%s: %d names shown, want %d", section, len(shown), len(names))
		}
		for i, s := range shown {
			if s.Text != names[i] {
				t.Errorf("%s: name %q reads as %q", section, names[i], s.Text)
			}
			if s.Before != `"\""` || s.After != `"\""` {
				t.Errorf("%s: name %q is shown without quote marks (%s, %s)", section, names[i], s.Before, s.After)
			}
		}
	}
}

// TestRightToLeftShownAsSentInBrowser: in a real browser, under the page's own
// Content-Security-Policy, a value with a Hebrew letter before two groups of digits is laid out
// in reading order with the groups swapped ("ש 0532 0130" reads "0130 0532 ש"), and its second
// showing, in the order sent, has them as sent: 0532 left of 0130.
func TestRightToLeftShownAsSentInBrowser(t *testing.T) {
	page := approval.RenderAskPage(t, approval.Call{ID: strings.Repeat("a", 32), Issuer: "https://issuer.example", Subject: "alice",
		Upstream: "bank", Tool: "bank__pay", UpstreamTool: "pay", Arguments: []byte(`{"account":"\u05e9 0532 0130"}`),
		Expiry: time.Now().Add(time.Minute)})
	url := servePage(t, page)

	tab := browsertest.Tab(t, browsertest.New(t))
	browsertest.Step(t, tab, "open the page", chromedp.Navigate(url))
	// The left edge of each group of digits in the reading-order span and in the order-sent one.
	type edges struct{ Read, Sent []float64 }
	ctx, cancel := context.WithTimeout(tab, browsertest.StepTimeout)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[edges](`(() => {
		const at = (el) => ['0532', '0130'].map(g => {
			const n = el.firstChild, i = n.textContent.indexOf(g), r = document.createRange();
			r.setStart(n, i); r.setEnd(n, i + g.length);
			return r.getBoundingClientRect().left;
		});
		const spans = [...document.querySelectorAll('#arguments dd .s')];
		return {Read: at(spans.find(s => !s.classList.contains('sent'))), Sent: at(document.querySelector('#arguments .sent'))};
	})()`))
	cancel()
	if err != nil {
		t.Fatalf("reading the layout: %v", err)
	}
	if len(got.Read) != 2 || len(got.Sent) != 2 {
		t.Fatalf("layout read: %+v", got)
	}
	if got.Read[0] <= got.Read[1] {
		t.Errorf("reading order: 0532 at %v, 0130 at %v; want the groups swapped, as the bidirectional algorithm lays them out", got.Read[0], got.Read[1])
	}
	if got.Sent[0] >= got.Sent[1] {
		t.Errorf("order sent: 0532 at %v, 0130 at %v; want 0532 first, as sent", got.Sent[0], got.Sent[1])
	}
}

// servePage serves page, with the pages' security headers, until the test ends, and returns
// its URL.
func servePage(t *testing.T, page string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		webpage.SetSecurityHeaders(w.Header())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
