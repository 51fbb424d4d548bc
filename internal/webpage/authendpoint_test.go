package webpage

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSignInNeedsAUsableAuthorizationEndpoint: the page's sign-in sends the browser to the
// authorization endpoint the issuer's discovery document names, so a document naming none, a
// relative one, or one that is not https (http only on a loopback host) is refused as discovery
// fails, as check-config --online refuses it (ProbeSignIn) and as a per-user OAuth backend's
// authorization server is refused: the page says the issuer cannot be used, instead of sending
// the browser to its own page again, the sign-in's state, nonce and PKCE challenge in the query,
// round after round, or to a script or another scheme. A document without a token endpoint
// is refused too.
func TestSignInNeedsAUsableAuthorizationEndpoint(t *testing.T) {
	t.Parallel()
	ring := testRing(t)
	for _, tc := range []struct {
		name, auth, token string // "-" leaves the member out; "ISS" stands for the issuer's URL
		ok                bool
	}{
		{"an absolute endpoint of the issuer", "ISS/authorize", "ISS/token", true},
		{"no authorization endpoint", "-", "ISS/token", false},
		{"an empty authorization endpoint", "", "ISS/token", false},
		{"a relative authorization endpoint", "/authorize", "ISS/token", false},
		{"a script", "javascript:alert(1)", "ISS/token", false},
		{"another scheme", "ftp://idp.example/authorize", "ISS/token", false},
		{"plain http off loopback", "http://idp.example/authorize", "ISS/token", false},
		{"no token endpoint", "ISS/authorize", "-", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				iss := "http://" + r.Host
				doc := map[string]string{"issuer": iss, "jwks_uri": iss + "/keys"}
				for k, v := range map[string]string{"authorization_endpoint": tc.auth, "token_endpoint": tc.token} {
					if v != "-" {
						doc[k] = strings.Replace(v, "ISS", iss, 1)
					}
				}
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(doc)
			}))
			t.Cleanup(srv.Close)
			s := NewSignIn(SignInConfig{Issuer: srv.URL, ClientID: "gw", ClientSecret: "client-secret-9kX2",
				RedirectURL: "https://gw.example/callback", SessionTTL: time.Hour}, ring, nil, nil)
			rec := httptest.NewRecorder()
			err := s.Start(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/page", nil), "/page", false)
			loc := rec.Header().Get("Location")
			if tc.ok {
				if err != nil || !strings.HasPrefix(loc, srv.URL+"/authorize?") {
					t.Errorf("refused: %v, Location %q", err, loc)
				}
				return
			}
			var ue *UnreachableError
			if !errors.As(err, &ue) || loc != "" || rec.Code == http.StatusSeeOther {
				t.Errorf("sent the browser on: %v, %d, Location %q", err, rec.Code, loc)
			}
		})
	}
}
