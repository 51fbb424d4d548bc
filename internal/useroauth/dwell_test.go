package useroauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// TestFormsCountOnlyAfterTheirPageWasShown: a page elsewhere can make a double-click land on
// the connect pages' buttons as they appear; Disconnect revokes the user's tokens. As on the
// approval page, a Connect, Continue or Disconnect posted within webpage.MinDwell of its page
// being shown (by the shared store's clock) is refused, 409 too_soon, and
// changes nothing; once the page has been on screen that long, the same form counts.
func TestFormsCountOnlyAfterTheirPageWasShown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	who := f.caller(realop.UserID)
	b := f.browser(t)
	tooSoon := func(what string, status int, where *url.URL, body string) {
		t.Helper()
		if status != http.StatusConflict || !strings.Contains(body, "less than a second") || where.Query().Get("authRequestID") != "" {
			t.Errorf("%s at once: %d at %s, want 409 and no authorization round trip\n%s", what, status, where, body)
		}
	}

	// A call's connect link: Continue.
	link := f.link(t, who)
	status, body := b.openLink(link, f.idp.Username())
	if status != http.StatusOK {
		t.Fatalf("connect page: %d\n%s", status, body)
	}
	form := url.Values{"csrf": {csrfOf(t, body)}}
	s, where, page := b.postAtOnce(link, form)
	tooSoon("Continue", s, where, page)
	f.clock.Advance(webpage.MinDwell - time.Millisecond)
	s, where, page = b.postAtOnce(link, form)
	tooSoon("Continue just before the dwell", s, where, page)
	f.clock.Advance(time.Millisecond)
	if _, where, _ := b.postAtOnce(link, form); where.Query().Get("authRequestID") == "" {
		t.Fatalf("Continue once the page was shown a second: at %s, want the authorization server's sign-in", where)
	}

	// The list page: Connect, then Disconnect.
	_, _, body = b.get(f.srv.URL + "/connect/")
	s, where, page = b.postAtOnce(f.srv.URL+"/connect/b/"+backendName, url.Values{"csrf": {csrfOf(t, body)}})
	tooSoon("Connect", s, where, page)
	if status, body := b.connect(f.link(t, who), f.idp.Username(), f.as.Username()); status != http.StatusOK {
		t.Fatalf("connect: %d\n%s", status, body)
	}
	f.mustToken(t, who)
	_, _, body = b.get(f.srv.URL + "/connect/")
	disconnect := url.Values{"csrf": {csrfOf(t, body)}}
	s, where, page = b.postAtOnce(f.srv.URL+"/connect/b/"+backendName+"/disconnect", disconnect)
	tooSoon("Disconnect", s, where, page)
	f.mustToken(t, who)
	f.clock.Advance(webpage.MinDwell)
	if s, _, page := b.postAtOnce(f.srv.URL+"/connect/b/"+backendName+"/disconnect", disconnect); s != http.StatusOK || !strings.Contains(page, "Disconnected") {
		t.Errorf("Disconnect once the page was shown a second: %d\n%s", s, page)
	}
	f.noToken(t, who)
}
