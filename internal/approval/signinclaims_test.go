package approval

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// TestSignInIdentityReadExactly: the page's user is the ID token's "iss" and "sub" as spelt, the
// names the gateway reads a caller's identity by. A user whose ID token also carries a claim a
// folding decoder reads as "sub" ("ſub" with a long s, "SUB") was signed in as that claim's
// value, so mallory, given "ſub": "alice", decided alice's calls; such a sign-in is refused, as
// is one whose ID token names any claim twice under that folding (the rule access tokens meet).
// So is one whose ID token has no "sub", or an empty one (go-oidc requires neither): every such
// user would be the one user "" to the pages, each seeing and disconnecting the accounts the
// others connected.
func TestSignInIdentityReadExactly(t *testing.T) {
	signIn := devIssuerSignIn(t, map[string]devissuer.Claims{
		"alice": {}, "mallory": {"\u017fub": "alice"}, "trudy": {"SUB": "alice"},
		// The name the page shows is read by a folding decoder too: which of the two it
		// shows depends on the issuer's member order.
		"oscar": {"Preferred_Username": "alice"},
		"nosub": {"sub": nil}, "blanksub": {"sub": ""},
	})
	if status, body := signIn("alice", "alice"); status != http.StatusOK || !strings.Contains(body, `name="csrf"`) {
		t.Fatalf("alice on her own call: %d %s", status, body)
	}
	for _, user := range []string{"mallory", "trudy"} {
		if status, body := signIn(user, "alice"); strings.Contains(body, `name="csrf"`) || status == http.StatusOK {
			t.Errorf("%s, whose ID token also names alice, was shown alice's call: %d", user, status)
		}
	}
	// oscar on his own call: his sub is his, but his ID token names preferred_username twice.
	if status, body := signIn("oscar", "oscar"); strings.Contains(body, `name="csrf"`) || status == http.StatusOK {
		t.Errorf("oscar, whose ID token names a claim twice, was shown his call: %d", status)
	}
	for _, user := range []string{"nosub", "blanksub"} {
		if status, body := signIn(user, ""); status != http.StatusBadRequest || !strings.Contains(body, "Sign-in failed") {
			t.Errorf("%s, whose ID token names no subject, was signed in: %d %s", user, status, body)
		}
	}
}

// TestSessionCookieFitsBrowsers: browsers drop a cookie over 4096 bytes without a word, so a
// session that did not fit was never sent back: the page started a sign-in again, which the
// issuer answered at once, again and again until the browser gave up on the redirects. The name
// a page shows (preferred_username, email or name, which many issuers let users choose) is cut
// to fit; an identity that cannot fit (a subject of kilobytes) fails the sign-in with a page
// saying so. No cookie the sign-in sets is over the limit.
func TestSessionCookieFitsBrowsers(t *testing.T) {
	long := strings.Repeat("\u00e9", 3000)
	signIn := devIssuerSignIn(t, map[string]devissuer.Claims{"longname": {"preferred_username": long}, "longsub": {"sub": long}})
	if status, body := signIn("longname", "longname"); status != http.StatusOK || !strings.Contains(body, `name="csrf"`) {
		t.Errorf("a user with a long name on their own call: %d\n%s", status, body)
	}
	if status, body := signIn("longsub", long); status != http.StatusBadRequest || !strings.Contains(body, "Sign-in failed") {
		t.Errorf("a user whose subject cannot fit a cookie: %d, want the sign-in refused\n%s", status, body)
	}
}

// devIssuerSignIn is the page over TLS with the dev issuer's users; the function it returns asks
// a call of owner and signs user in on its page in a new browser, returning the page the browser
// lands on. No cookie the page sets may be larger than browsers keep, and the sign-in may not
// go round in redirects.
func devIssuerSignIn(t *testing.T, users map[string]devissuer.Claims) func(user, owner string) (int, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cfg := Config{BaseURL: srv.URL, ClientID: testClientID, ClientSecret: testClientSecret}.WithDefaults()
	iss, err := devissuer.New(devissuer.Options{Users: users,
		WebClients: map[string]devissuer.WebClient{testClientID: {Secret: testClientSecret, RedirectURIs: []string{cfg.redirectURL()}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = iss.Close() })
	cfg.Issuer = iss.URL()
	mem, ring := storeAndKeys(t, time.Now)
	svc, err := New(cfg, Deps{Store: mem, Keys: ring, Logger: slog.New(slog.DiscardHandler), HTTPClient: &http.Client{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = svc
	return func(user, owner string) (int, string) {
		t.Helper()
		id := hex.EncodeToString([]byte((user + "-call-id-padding")[:16]))
		page, err := svc.Ask(context.Background(), Call{ID: id, Issuer: iss.URL(), Subject: owner,
			Upstream: "files", Tool: "files__delete", UpstreamTool: "delete", Arguments: json.RawMessage(`{"path":"/x"}`),
			Digest: []byte("digest-of-the-arguments-32-bytes"), Client: "test-client 1.0", Expiry: time.Now().Add(5 * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Transport: srv.Client().Transport, Jar: jar, Timeout: 20 * time.Second,
			CheckRedirect: func(r *http.Request, via []*http.Request) error {
				for _, ck := range r.Response.Cookies() {
					if n := len(ck.Name) + 1 + len(ck.Value); n > 4096 {
						t.Errorf("%s: cookie %s of %d bytes, which browsers drop", user, ck.Name, n)
					}
				}
				if len(via) > 5 {
					return errors.New("sign-in redirect loop")
				}
				return nil
			}}
		resp, err := c.Get(page) // to the issuer's sign-in form
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		form := resp.Request.URL.Query()
		form.Set("username", user)
		authorize := *resp.Request.URL
		authorize.RawQuery = ""
		resp, err = c.PostForm(authorize.String(), form)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode, string(body)
	}
}
