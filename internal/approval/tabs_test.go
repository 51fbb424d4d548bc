package approval

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestSignInsInSeveralTabs: a person sent several approval links at once opens each in a tab of
// one browser before signing in, and each page sends the browser to the issuer. Signing in on
// any of the last four tabs lands on that tab's call; the oldest beyond four are refused as
// another sign-in's, and the browser keeps one login cookie of bounded size. Before, each page
// replaced the browser's one sign-in in progress, so signing in on the first tab was refused
// ("does not belong to this browser's sign-in") and only the last tab could sign in.
func TestSignInsInSeveralTabs(t *testing.T) {
	f := newPageFixture(t)
	c := f.browser(t)
	// Each tab opens its call's page and is sent to the provider's login form.
	type tab struct{ path, page, request string }
	var tabs []tab
	for i := range 6 {
		path := "/tmp/tab-" + string(rune('a'+i))
		_, page := f.ask(t, realop.UserID, `{"path":"`+path+`"}`)
		resp, err := c.Get(page)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		id := resp.Request.URL.Query().Get("authRequestID")
		if id == "" {
			t.Fatalf("tab %d not sent to the provider's login form: %s", i, resp.Request.URL)
		}
		tabs = append(tabs, tab{path, page, resp.Request.URL.ResolveReference(&url.URL{Path: "/login/username"}).String() + "\x00" + id})
	}
	if n := len(cookieValue(t, c, f.srv.URL, "__Host-mcpgw_approval_login")); n == 0 || n > 4000 {
		t.Fatalf("login cookie of %d bytes", n)
	}
	signIn := func(tb tab) (int, string) {
		login, id, _ := strings.Cut(tb.request, "\x00")
		resp, err := c.PostForm(login, url.Values{"id": {id}, "username": {f.op.Username()}, "password": {realop.UserPassword}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// The first tab's sign-in is one of the two beyond the four kept.
	if status, body := signIn(tabs[0]); status != http.StatusBadRequest || !strings.Contains(body, "does not belong to this browser") {
		t.Errorf("the oldest tab, beyond the four kept: %d\n%.300s", status, body)
	}
	// The third tab, then the last, each land on their own call.
	for _, i := range []int{2, 5} {
		status, body := signIn(tabs[i])
		if status != http.StatusOK || !strings.Contains(body, tabs[i].path) || !strings.Contains(body, `value="approve"`) {
			t.Errorf("tab %d: %d, want its call's page (%s)\n%.300s", i, status, tabs[i].path, body)
		}
	}
}

// cookieValue is the value of cookie name that c's jar sends to base.
func cookieValue(t *testing.T, c *http.Client, base, name string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}
