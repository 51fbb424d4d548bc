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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		webpage.SetSecurityHeaders(w.Header())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)

	tab := browsertest.Tab(t, browsertest.New(t))
	browsertest.Step(t, tab, "open the page", chromedp.Navigate(srv.URL))
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
