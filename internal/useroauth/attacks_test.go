package useroauth

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
	"github.com/mcp-gateway/gateway/internal/vault"
	"github.com/mcp-gateway/gateway/mrtr"
)

// held starts alice's connect in browser b and stops before the callback: it returns the
// callback URL the authorization server sent the browser to.
func held(t *testing.T, f *fixture, b *browser, gwUser, asUser string, link string) *url.URL {
	t.Helper()
	b.stop.Store(true)
	b.connect(link, gwUser, asUser)
	h := b.held.Load()
	if h == nil {
		t.Fatal("the browser was not sent to the callback")
	}
	b.stop.Store(false)
	u, err := url.Parse(*h)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// calledBack has alice's connect through link, in b on f, load its callback, which must connect
// her; put puts the flow cookie back as it was before the callback took it, for a replay of the
// callback at a URL, and returns b.
func calledBack(t *testing.T, f *fixture, b *browser, link string) (u *url.URL, put func(at *url.URL) *browser) {
	t.Helper()
	u = held(t, f, b, f.idp.Username(), f.as.Username(), link)
	jar := b.c.Jar.(*cookiejar.Jar)
	saved := jar.Cookies(u)
	if status, _, body := b.get(u.String()); status != http.StatusOK {
		t.Fatalf("the callback: %d\n%s", status, body)
	}
	return u, func(at *url.URL) *browser {
		jar.SetCookies(at, saved)
		return b
	}
}

// genuineConnects checks that the genuine response u, loaded in b after refusals that were to
// leave its round trip open, still connects who; then it disconnects who again.
func genuineConnects(t *testing.T, f *fixture, b *browser, u *url.URL, who vault.Caller) {
	t.Helper()
	if status, _, body := b.get(u.String()); status != http.StatusOK {
		t.Fatalf("the genuine callback: %d\n%s", status, body)
	}
	if _, err := f.svc.Disconnect(t.Context(), who, backendName, "user"); err != nil {
		t.Fatal(err)
	}
}

func withQuery(u *url.URL, set map[string]string, del ...string) string {
	c := *u
	q := c.Query()
	for k, v := range set {
		q.Set(k, v)
	}
	for _, k := range del {
		q.Del(k)
	}
	c.RawQuery = q.Encode()
	return c.String()
}

// TestCallbackAttacks: every way a callback can be wrong is refused with a page that says so,
// before it costs the authorization server anything where it can be, and stores nothing.
func TestCallbackAttacks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{authServer: realop.AuthServerOptions{ISSResponse: true}})
	alice, bob := f.caller(realop.UserID), f.caller(realop.OtherUserID)
	refused := func(t *testing.T, b *browser, u string, status int, reason string, says ...string) {
		t.Helper()
		before := f.tokenRequests.Load()
		got, _, body := b.get(u)
		if got != status {
			t.Errorf("status %d, want %d:\n%s", got, status, body)
		}
		expectContains(t, "the refusal", body, says...)
		if f.obs.count("consent failed "+reason) == 0 && reason != FailBadState {
			t.Errorf("no failed consent counted as %s: %v", reason, f.obs.counts)
		}
		if reason != FailCodeRefused && f.tokenRequests.Load() != before {
			t.Errorf("the refused callback made %d token requests", f.tokenRequests.Load()-before)
		}
		f.noToken(t, alice)
		f.noToken(t, bob)
	}

	t.Run("a state that does not open", func(t *testing.T) {
		refused(t, f.browser(t), f.srv.URL+"/connect/callback/"+backendName+"?code=junk&state=junk", http.StatusBadRequest, FailBadState, "not one the gateway asked for")
	})
	t.Run("a missing iss", func(t *testing.T) {
		b := f.browser(t)
		u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		if u.Query().Get("iss") != f.as.Issuer() {
			t.Fatalf("the authorization server sent no iss: %s", u)
		}
		refused(t, b, withQuery(u, nil, "iss"), http.StatusBadRequest, FailIssMismatch, "does not come from the authorization server")
		expectContains(t, "the log", f.log.String(), "mix-up")
	})
	t.Run("another server's iss", func(t *testing.T) {
		b := f.browser(t)
		u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		refused(t, b, withQuery(u, map[string]string{"iss": f.idp.Issuer()}), http.StatusBadRequest, FailIssMismatch, "does not come from")
	})
	t.Run("a response of another browser's sign-in", func(t *testing.T) {
		// bob's code and state, loaded in alice's browser (a login CSRF, or a stolen
		// callback): her browser has no flow cookie for that state.
		u := held(t, f, f.browser(t), realop.OtherUsername, realop.OtherUsername, f.link(t, bob))
		victim := f.browser(t)
		victim.openLink(f.link(t, alice), f.idp.Username())
		refused(t, victim, u.String(), http.StatusBadRequest, FailOtherBrowser, "started in another browser")
	})
	t.Run("a code injected into a genuine session", func(t *testing.T) {
		// bob's code with alice's own state, in her browser: every check on the gateway's
		// side passes, and the authorization server refuses the code, which was issued for
		// bob's PKCE challenge, not hers.
		code := held(t, f, f.browser(t), realop.OtherUsername, realop.OtherUsername, f.link(t, bob)).Query().Get("code")
		victim := f.browser(t)
		u := held(t, f, victim, f.idp.Username(), f.as.Username(), f.link(t, alice))
		refused(t, victim, withQuery(u, map[string]string{"code": code}), http.StatusBadRequest, FailCodeRefused, "did not accept")
	})
	t.Run("the signed-in user is not the caller", func(t *testing.T) {
		// One browser: alice starts, then bob signs in on it before the callback arrives.
		b := f.browser(t)
		u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		_, where, _ := b.get(f.srv.URL + "/connect/?signin=again")
		b.login(where, realop.OtherUsername)
		refused(t, b, u.String(), http.StatusForbidden, FailWrongUser, "made for another user")
		expectContains(t, "the log", f.log.String(), "wrong user", "caller="+alice.Issuer+"#"+alice.Subject)
		// Its "sign in as another user" leads to a sign-in, not to the callback again (which,
		// without the authorization server's answer, is a refusal).
		_, _, body := b.get(u.String())
		_, rest, ok := strings.Cut(body, `<a href="`)
		href, _, _ := strings.Cut(rest, `"`)
		if !ok || !strings.Contains(href, "signin=again") {
			t.Fatalf("the refusal has no sign-in link:\n%s", body)
		}
		if status, where, body := b.get(f.srv.URL + href); where.Query().Get("authRequestID") == "" {
			t.Errorf("its sign-in link %s ended at %s (%d), want the provider's login\n%s", href, where, status, body)
		}
	})
	t.Run("the authorization server refuses", func(t *testing.T) {
		b := f.browser(t)
		u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		refused(t, b, withQuery(u, map[string]string{"error": "access_denied"}, "code"), http.StatusForbidden, FailDenied, "did not grant access")
	})
	t.Run("a refusal from another server", func(t *testing.T) {
		// RFC 9207 §2.4 holds error responses to the issuer too: a server the round trip did
		// not go to cannot make the page say the user's server refused (and end the round
		// trip, its flow cookie taken), whatever code it picks.
		b := f.browser(t)
		u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		refused(t, b, withQuery(u, map[string]string{"error": "access_denied", "iss": f.idp.Issuer()}, "code"), http.StatusBadRequest,
			FailIssMismatch, "does not come from")
		refused(t, b, withQuery(u, map[string]string{"error": "access_denied"}, "code", "iss"), http.StatusBadRequest,
			FailIssMismatch, "does not come from")
		genuineConnects(t, f, b, u, alice)
	})
	t.Run("neither a code nor an error", func(t *testing.T) {
		// Nothing to redeem: refused before the token endpoint is asked, and before the
		// state's single use, so the genuine response still connects.
		b := f.browser(t)
		u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		for _, bad := range []string{withQuery(u, nil, "code"), withQuery(u, map[string]string{"code": ""}),
			withQuery(u, map[string]string{"error": ""}, "code")} {
			refused(t, b, bad, http.StatusBadRequest, FailBadRequest, "carries no code")
		}
		genuineConnects(t, f, b, u, alice)
	})
	t.Run("a replayed callback", func(t *testing.T) {
		b := f.browser(t)
		u, put := calledBack(t, f, b, f.link(t, alice))
		tok := f.mustToken(t, alice)
		put(u)
		before := f.tokenRequests.Load()
		status, _, body := b.get(u.String())
		if status != http.StatusBadRequest || !strings.Contains(body, "used already") || f.tokenRequests.Load() != before {
			t.Errorf("replayed callback: %d, %d token requests\n%s", status, f.tokenRequests.Load()-before, body)
		}
		if f.mustToken(t, alice) != tok {
			t.Error("the replay changed the stored token")
		}
		if _, err := f.svc.Disconnect(t.Context(), alice, backendName, "user"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("garbage from the token endpoint", func(t *testing.T) {
		b := f.browser(t)
		u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		f.asLink.garbage.Store(true)
		defer f.asLink.garbage.Store(false)
		status, _, body := b.get(u.String())
		if status != http.StatusServiceUnavailable || !strings.Contains(body, "Nothing was stored") {
			t.Errorf("garbage: %d\n%s", status, body)
		}
		f.noToken(t, alice)
	})
	t.Run("a token endpoint that hangs", func(t *testing.T) {
		b := f.browser(t)
		u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		f.asLink.hang.Store(true)
		defer f.asLink.hang.Store(false)
		// The page answers rather than hanging with the server: wait for it with a bound far
		// above the backend's timeout (a bound on the wait, not a timing the test asserts).
		type answer struct {
			status int
			body   string
		}
		done := make(chan answer, 1)
		go func() {
			status, _, body := b.get(u.String())
			done <- answer{status, body}
		}()
		select {
		case a := <-done:
			if a.status != http.StatusServiceUnavailable {
				t.Errorf("hanging server: %d\n%s", a.status, a.body)
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("the callback page hangs with the authorization server")
		}
		f.noToken(t, alice)
	})
}

// TestLinkAttacks: a link is only the caller's, only while it lasts, and only a form of the
// page itself continues it.
func TestLinkAttacks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice := f.caller(realop.UserID)
	t.Run("another user opens it", func(t *testing.T) {
		b := f.browser(t)
		status, body := b.openLink(f.link(t, alice), realop.OtherUsername)
		if status != http.StatusForbidden || strings.Contains(body, `id="continue"`) {
			t.Fatalf("another user's visit: %d\n%s", status, body)
		}
		expectContains(t, "the refusal", body, "Not your link", "signin-again")
		expectContains(t, "the log", f.log.String(), "wrong user on the connect page")
	})
	t.Run("an expired link", func(t *testing.T) {
		link := f.link(t, alice)
		f.clock.Advance(DefaultConsentTTL + time.Second)
		status, _, body := f.browser(t).get(link)
		if status != http.StatusGone || !strings.Contains(body, "expired") {
			t.Errorf("expired link: %d\n%s", status, body)
		}
	})
	t.Run("a tampered link", func(t *testing.T) {
		link := f.link(t, alice)
		status, _, _ := f.browser(t).get(link[:len(link)-2] + "xx")
		if status != http.StatusNotFound {
			t.Errorf("tampered link: %d", status)
		}
	})
	t.Run("a form without its token or from another origin", func(t *testing.T) {
		b := f.browser(t)
		link := f.link(t, alice)
		if status, body := b.openLink(link, f.idp.Username()); status != http.StatusOK {
			t.Fatalf("link page: %d\n%s", status, body)
		}
		status, _, body := b.post(link, url.Values{"csrf": {"forged"}})
		if status != http.StatusForbidden || !strings.Contains(body, "not sent from the connect page") {
			t.Errorf("forged token: %d\n%s", status, body)
		}
		req, _ := http.NewRequest(http.MethodPost, link, strings.NewReader(""))
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-origin form: %d", resp.StatusCode)
		}
		if f.obs.count("consent started ") != 0 {
			t.Error("a refused form started a consent")
		}
	})
}

// TestCallbackBudget: each callback records its state's single use in the shared store; a
// signed-in caller who loops through connects is refused once past its budget, before the
// code costs the authorization server anything, and other callers are not affected.
func TestCallbackBudget(t *testing.T) {
	t.Parallel()
	// The documented bound is the one the service applies.
	doc, err := os.ReadFile("../../docs/user-oauth.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("at most %d\n  callbacks per `consentTTL` and %d s, so at most %d live keys", maxCallbacks,
		int(mrtr.ReplicaSkew.Seconds()), 2*maxCallbacks); !strings.Contains(string(doc), want) {
		t.Errorf("docs/user-oauth.md does not say %q", want)
	}
	f := newFixture(t, fixtureOptions{})
	if f.svc.callbacks.Count != maxCallbacks || f.svc.callbacks.Window != f.svc.cfg.ConsentTTL+mrtr.ReplicaSkew {
		t.Errorf("callback budget %+v", f.svc.callbacks)
	}
	f.svc.callbacks.Count = 2
	alice, bob := f.caller(realop.UserID), f.caller(realop.OtherUserID)
	for range f.svc.callbacks.Count {
		b := f.browser(t)
		u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		if status, _, body := b.get(withQuery(u, map[string]string{"code": "junk"})); status != http.StatusBadRequest {
			t.Fatalf("a junk code within the budget: %d\n%s", status, body)
		}
	}
	b := f.browser(t)
	u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
	before := f.tokenRequests.Load()
	resp, err := b.c.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	status, body := resp.StatusCode, string(raw)
	if status != http.StatusTooManyRequests || f.tokenRequests.Load() != before {
		t.Errorf("a callback past the budget: %d, %d token requests\n%s", status, f.tokenRequests.Load()-before, body)
	}
	expectContains(t, "the refusal", body, "too many connections", "try again in 11 minutes")
	// The budget frees when the window alice's first callback opened ends: consentTTL and
	// ReplicaSkew after it (its records live that long: TestCallbackRecordOutlivesASkewedReplica),
	// which this test's few seconds leave a little short of, not a moment sooner.
	window := f.svc.callbacks.Window
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil ||
		time.Duration(secs)*time.Second > window || time.Duration(secs)*time.Second < window-time.Minute {
		t.Errorf("Retry-After %q, want when the budget frees (about %s)", resp.Header.Get("Retry-After"), window)
	}
	if f.obs.count("consent failed "+FailTooMany) != 1 {
		t.Errorf("consent metrics: %v", f.obs.counts)
	}
	f.noToken(t, alice)
	if status, body := f.browser(t).connect(f.link(t, bob), realop.OtherUsername, realop.OtherUsername); status != http.StatusOK {
		t.Fatalf("bob's connect: %d\n%s", status, body)
	}
	f.mustToken(t, bob)
}

// TestHeadChangesNothing: a HEAD (a link prefetcher, a mail scanner following the browser's
// cookies) is answered 405 wherever a GET has an effect: it spends no code, completes no flow,
// clears no cookie and starts no sign-in; the GET that follows still completes the connect.
func TestHeadChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice := f.caller(realop.UserID)
	head := func(t *testing.T, b *browser, u, allow string) {
		t.Helper()
		before := f.tokenRequests.Load()
		req, err := http.NewRequest(http.MethodHead, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != allow {
			t.Errorf("HEAD %s: %d Allow %q, want 405 Allow %q", u, resp.StatusCode, resp.Header.Get("Allow"), allow)
		}
		if c := resp.Header.Values("Set-Cookie"); len(c) > 0 {
			t.Errorf("HEAD %s set cookies: %d", u, len(c))
		}
		if f.tokenRequests.Load() != before {
			t.Errorf("HEAD %s made %d token requests", u, f.tokenRequests.Load()-before)
		}
	}
	t.Run("the callback", func(t *testing.T) {
		b := f.browser(t)
		u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		head(t, b, u.String(), "GET")
		f.noToken(t, alice)
		if status, _, body := b.get(u.String()); status != http.StatusOK || !strings.Contains(body, "Connected") {
			t.Fatalf("the callback after a HEAD: %d\n%s", status, body)
		}
		f.mustToken(t, alice)
		if _, err := f.svc.Disconnect(t.Context(), alice, backendName, "user"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("pages that start a sign-in", func(t *testing.T) {
		b := f.browser(t)
		head(t, b, f.link(t, alice), "GET, POST")
		head(t, b, f.srv.URL+"/connect/", "GET")
		head(t, b, f.srv.URL+"/connect/b/"+backendName, "POST")
	})
	t.Run("pages whose GET changes nothing", func(t *testing.T) {
		c := &http.Client{Transport: f.srv.Client().Transport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Head(f.srv.URL + "/connect")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Errorf("HEAD /connect (the redirect to the list): %d", resp.StatusCode)
		}
	})
}

// TestSignInAgainOnlyFromThePages: another site sending a signed-in browser to the connect
// pages with ?signin=again (the "sign in as another user" link of a refusal) gets the page,
// the session kept; the pages' own link still signs the browser in afresh.
func TestSignInAgainOnlyFromThePages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	b := f.browser(t)
	if status, body := b.openLink(f.srv.URL+"/connect/", f.idp.Username()); status != http.StatusOK || !strings.Contains(body, `id="backends"`) {
		t.Fatalf("the list: %d\n%s", status, body)
	}
	open := func(site string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/connect/?signin=again", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Sec-Fetch-Site", site)
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return resp, string(body)
	}
	resp, body := open("cross-site")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `id="backends"`) {
		t.Errorf("?signin=again from another site: %d at %s; want the list, still signed in\n%s", resp.StatusCode, resp.Request.URL, body)
	}
	if resp, _ := open("same-origin"); resp.Request.URL.Query().Get("prompt") != "login" && resp.Request.URL.Query().Get("authRequestID") == "" {
		t.Errorf("?signin=again from the pages: ended at %s; want the provider's login", resp.Request.URL)
	}
}

// TestCallbackRecordOutlivesASkewedReplica: a callback's single-use record lasts as long as any
// replica whose clock is within mrtr.ReplicaSkew still takes its state for live. Replica I,
// whose clock runs 20 seconds ahead of replica F's (and the store's), starts alice's connect,
// so the state it seals expires consentTTL after I's clock; the browser's callback is taken at
// once, on I. Once consentTTL has passed since, the same callback, its flow cookie put back,
// is loaded at F, which takes the state for live 20 seconds more: it is refused as used, before
// the code reaches the authorization server. The record used to last consentTTL from the
// callback, and F redeemed the code a second time.
func TestCallbackRecordOutlivesASkewedReplica(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	issuer := newFixture(t, fixtureOptions{replicaOf: f, ahead: 20 * time.Second})
	alice := f.caller(realop.UserID)
	u, put := calledBack(t, issuer, issuer.browser(t), issuer.link(t, alice))
	f.mustToken(t, alice)
	f.clock.Advance(f.svc.cfg.ConsentTTL + time.Second)
	replay := *u
	replay.Host = strings.TrimPrefix(f.srv.URL, "https://")
	b := put(&replay)
	before := f.tokenRequests.Load()
	status, _, body := b.get(replay.String())
	if status != http.StatusBadRequest || !strings.Contains(body, "used already") || f.tokenRequests.Load() != before {
		t.Errorf("the callback replayed on F: %d, %d token requests\n%s", status, f.tokenRequests.Load()-before, body)
	}
}
