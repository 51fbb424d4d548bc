package useroauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestConnectBehindPathPrefix: behind a balancer that routes /team-a/ to the gateway and strips
// the prefix (BaseURL https://host/team-a), a call's connect link, the authorization server's
// callback, the return from sign-in, the list page's redirect and its forms all carry the prefix,
// so a browser that reaches the gateway only through the balancer connects an account, lists it
// and disconnects it.
func TestConnectBehindPathPrefix(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{prefix: "/team-a"})
	alice := f.caller(realop.UserID)
	link := f.link(t, alice)
	if !strings.HasPrefix(link, f.srv.URL+"/team-a/connect/l/") {
		t.Fatalf("the connect link %s lacks the prefix", link)
	}
	b := f.browser(t)
	if status, body := b.connect(link, f.idp.Username(), realop.OtherUsername); status != http.StatusOK || !strings.Contains(body, "Connected") {
		t.Fatalf("connecting through the balancer: %d\n%s", status, body)
	}
	f.mustToken(t, alice)
	status, where, body := b.get(f.srv.URL + "/team-a/connect")
	if status != http.StatusOK || where.Path != "/team-a/connect/" || !strings.Contains(body, "Connected</span> since") {
		t.Fatalf("the list page: %d at %s\n%s", status, where, body)
	}
	_, rest, _ := strings.Cut(body, `action="`)
	action, _, _ := strings.Cut(rest, `"`)
	if action != "/team-a/connect/b/"+backendName+"/disconnect" {
		t.Fatalf("the disconnect form posts to %q", action)
	}
	status, _, body = b.post(where.ResolveReference(&url.URL{Path: action}).String(), url.Values{"csrf": {csrfOf(t, body)}})
	if status != http.StatusOK || !strings.Contains(body, "Disconnected") {
		t.Fatalf("disconnecting through the balancer: %d\n%s", status, body)
	}
	f.noToken(t, alice)
}
