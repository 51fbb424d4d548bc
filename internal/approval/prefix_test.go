package approval

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestPageBehindPathPrefix: behind a balancer that routes /team-a/ to the gateway and strips the
// prefix (BaseURL https://host/team-a), the page's URL, its sign-in callback, the return from
// sign-in and its decision forms all carry the prefix, so a browser that reaches the gateway only
// through the balancer signs in, sees the call and approves it.
func TestPageBehindPathPrefix(t *testing.T) {
	f := newPageFixture(t, func(c *Config) { c.BaseURL += "/team-a" })
	f.srv.Config.Handler = http.StripPrefix("/team-a", f.svc) // a request outside the prefix is 404
	id, page := f.ask(t, realop.UserID, `{"path":"/tmp/x"}`)
	if want := f.srv.URL + "/team-a/approval/c/" + id; page != want {
		t.Fatalf("the page's URL is %s, want %s", page, want)
	}
	c := f.browser(t)
	resp, body := f.signIn(t, c, page, f.op.Username())
	if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != page {
		t.Fatalf("after sign-in: %d at %s, want the page %s", resp.StatusCode, resp.Request.URL, page)
	}
	_, rest, _ := strings.Cut(body, `action="`)
	action, _, _ := strings.Cut(rest, `"`)
	target, err := url.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	if target = target.ResolveReference(&url.URL{Path: action}); target.String() != page {
		t.Fatalf("the decision forms post to %q, want the page", action)
	}
	if status := f.approve(t, c, target.String(), body); status != http.StatusOK {
		t.Fatalf("approving through the balancer: status %d", status)
	}
	if v, _ := f.svc.Verdict(context.Background(), id, []byte("digest-of-the-arguments-32-bytes")); v != Approved {
		t.Errorf("verdict %q, want approved", v)
	}
}
