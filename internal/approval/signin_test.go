package approval

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestIssuerOutage: while the identity provider hangs, sign-ins degrade as token verification
// does. Concurrent sign-ins share one discovery attempt, and after it fails no other is made
// until the retry interval has passed; every one of them gets a page saying the identity
// provider cannot be reached, 503 with Retry-After. Once the provider answers again, sign-in
// works.
func TestIssuerOutage(t *testing.T) {
	f := newPageFixture(t)
	_, page := f.ask(t, realop.UserID, `{"path":"/tmp/x"}`)
	f.idp.down.Store(true)
	wave := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				c := f.browser(t)
				c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
				resp, err := c.Get(page)
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
				if resp.StatusCode != http.StatusServiceUnavailable || secs < 1 ||
					!strings.Contains(string(body), "identity provider") || !strings.Contains(string(body), f.op.Issuer()) {
					t.Errorf("sign-in with the provider down: %d Retry-After %q\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
				}
			})
		}
		wg.Wait()
	}
	wave(8)
	if n := f.idp.attempts.Load(); n != 1 {
		t.Errorf("8 concurrent sign-ins made %d discovery attempts, want 1", n)
	}
	wave(8)
	if n := f.idp.attempts.Load(); n != 1 {
		t.Errorf("sign-ins within the retry interval made %d more attempts, want none", n-1)
	}
	if n := f.obs.refused(RefusedIssuerDown); n != 16 {
		t.Errorf("%d refusals counted as issuer_unavailable, want 16", n)
	}
	// The provider is back, and the retry interval is over: sign-in works.
	f.idp.down.Store(false)
	f.clock.advance(5 * time.Second)
	c := f.browser(t)
	if resp, body := f.signIn(t, c, page, f.op.Username()); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Approve this tool call?") {
		t.Fatalf("sign-in after the outage: %d\n%s", resp.StatusCode, body)
	}
}

// TestCallbackCostsTheProviderLittle: a sign-in callback costs the provider nothing unless it
// answers a sign-in this browser started (its sealed login cookie, with the same state), and
// then one token request, in the client authentication the provider's metadata names (not one
// per style tried).
func TestCallbackCostsTheProviderLittle(t *testing.T) {
	f := newPageFixture(t)
	_, page := f.ask(t, realop.UserID, `{"path":"/tmp/x"}`)
	callback := f.srv.URL + "/approval/callback"
	get := func(c *http.Client, u string) int {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	// No sign-in started: refused without asking the provider.
	if status := get(f.browser(t), callback+"?code=junk&state=junk"); status != http.StatusBadRequest {
		t.Errorf("callback without a sign-in: status %d", status)
	}
	if n := f.idp.tokenRequests.Load(); n != 0 {
		t.Fatalf("a callback without a sign-in made %d token requests", n)
	}
	// A sign-in started in this browser: its state, with a junk code, costs one token request.
	c := f.browser(t)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("state") == "" {
		t.Fatalf("no sign-in started: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	state := loc.Query().Get("state")
	if status := get(c, callback+"?code=other&state=wrong-"+state); status != http.StatusBadRequest {
		t.Errorf("callback with another state: status %d", status)
	}
	if n := f.idp.tokenRequests.Load(); n != 0 {
		t.Fatalf("a callback with another state made %d token requests", n)
	}
	if status := get(c, callback+"?code=junk&state="+state); status != http.StatusBadRequest {
		t.Errorf("callback with a junk code: status %d", status)
	}
	if n := f.idp.tokenRequests.Load(); n != 1 {
		t.Fatalf("a junk code made %d token requests, want 1", n)
	}
	// A real sign-in still takes exactly one.
	if resp, body := f.signIn(t, f.browser(t), page, f.op.Username()); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Approve this tool call?") {
		t.Fatalf("sign-in: %d\n%s", resp.StatusCode, body)
	}
	if n := f.idp.tokenRequests.Load(); n != 2 {
		t.Errorf("a sign-in made %d token requests, want 1", n-1)
	}
}

// TestHeadChangesNothing: a call's page answers HEAD with 405 and an Allow header, as the
// connect pages do where a GET starts a sign-in: before, a HEAD of a browser not signed in
// started one (its sign-in cookie replaced, breaking a sign-in under way in another tab), and
// a HEAD of the "sign in as another user" link signed the browser out. A link prefetcher or
// scanner sending the browser's cookies now changes nothing, and the user's session still shows
// the call.
func TestHeadChangesNothing(t *testing.T) {
	f := newPageFixture(t)
	id, page, c, _ := f.signedIn(t)
	head := func(client *http.Client, u string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodHead, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		defer func() { client.CheckRedirect = nil }()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, POST" {
			t.Errorf("HEAD %s: %d Allow %q, want 405 Allow \"GET, POST\"", u, resp.StatusCode, resp.Header.Get("Allow"))
		}
		if ck := resp.Header.Values("Set-Cookie"); len(ck) > 0 {
			t.Errorf("HEAD %s set cookies: %q", u, ck)
		}
	}
	head(f.browser(t), page)
	head(c, page+"?signin=again")
	resp, err := c.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `name="csrf"`) {
		t.Errorf("call %s after the HEADs: %d, want its page to the signed-in user\n%s", id, resp.StatusCode, body)
	}
}

// TestSignInAgainOnlyFromThePage: "sign in as another user" signs the browser out and asks the
// issuer for a fresh login. Only the page links there, so only a navigation from the page's
// own origin (or one a browser does not label: typed, or an older browser) does that; another
// site sending the browser to a call's page with ?signin=again (a link, a redirect, a form
// GET) signed the user out of the pages and put a login prompt in their way, and now shows the
// page as to any link.
func TestSignInAgainOnlyFromThePage(t *testing.T) {
	f := newPageFixture(t)
	_, page, c, _ := f.signedIn(t)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	open := func(site string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, page+"?signin=again", nil)
		if err != nil {
			t.Fatal(err)
		}
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return resp, string(body)
	}
	for _, site := range []string{"cross-site", "same-site"} {
		resp, body := open(site)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `name="csrf"`) || len(resp.Header.Values("Set-Cookie")) > 0 {
			t.Errorf("?signin=again from a %s navigation: %d, cookies %q; want the call's page, the session kept",
				site, resp.StatusCode, resp.Header.Values("Set-Cookie"))
		}
	}
	for _, site := range []string{"same-origin", "none", ""} {
		resp, _ := open(site)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || loc == nil || loc.Query().Get("prompt") != "login" {
			t.Errorf("?signin=again from a navigation labelled %q: %d to %q; want a fresh sign-in", site, resp.StatusCode, loc)
		}
	}
}
