package useroauth

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestConnect: a caller's link, sign-in to the gateway, the backend's authorization server, the
// callback, and then a token the backend itself verifies, naming the account the user signed
// in with there; the list page shows it, and Disconnect revokes it at the authorization server
// and removes it. With the memory store and with a real Redis.
func TestConnect(t *testing.T) {
	t.Parallel()
	for _, redis := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "redis"}[redis], func(t *testing.T) {
			f := newFixture(t, fixtureOptions{redis: redis})
			alice := f.caller(realop.UserID)
			f.noToken(t, alice)
			b := f.browser(t)
			// alice connects the account of the provider's second user: the backend sees
			// that account, whatever the gateway calls her.
			status, body := b.connect(f.link(t, alice), f.idp.Username(), realop.OtherUsername)
			if status != http.StatusOK {
				t.Fatalf("callback page: %d\n%s", status, body)
			}
			expectContains(t, "the callback page", body, "Connected", backendName)
			tok := f.mustToken(t, alice)
			if got, err := f.whoami(t, tok); err != nil || got != "sub="+realop.OtherUserID {
				t.Fatalf("the backend with alice's token: %q, %v", got, err)
			}
			if f.obs.count("consent started ") != 1 || f.obs.count("consent completed ") != 1 {
				t.Errorf("consent metrics: %v", f.obs.counts)
			}
			for _, secret := range []string{tok, "access_token", "refresh_token"} {
				if strings.Contains(f.log.String(), secret) {
					t.Errorf("the log shows %q:\n%s", secret, f.log.String())
				}
			}
			expectContains(t, "the audit log", f.log.String(), "useroauth: connected", "subject="+f.idp.Issuer()+"#"+realop.UserID)
			// Another caller has no token.
			f.noToken(t, f.caller(realop.OtherUserID))

			status, _, body = b.get(f.srv.URL + "/connect/")
			if status != http.StatusOK || !strings.Contains(body, "Connected</span> since") {
				t.Fatalf("list page: %d\n%s", status, body)
			}
			before := f.revocations.Load()
			status, _, body = b.post(f.srv.URL+"/connect/b/"+backendName+"/disconnect", map[string][]string{"csrf": {csrfOf(t, body)}})
			if status != http.StatusOK || !strings.Contains(body, "Disconnected") {
				t.Fatalf("disconnect: %d\n%s", status, body)
			}
			if n := f.revocations.Load() - before; n != 2 {
				t.Errorf("%d revocation requests, want 2 (refresh and access token)", n)
			}
			f.noToken(t, alice)
			expectContains(t, "the audit log", f.log.String(), "useroauth: disconnected", "by=user")
		})
	}
}
