package webpage

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/redirecttest"
)

// TestCodeExchangeFollowsNoRedirect: the sign-in's code exchange carries the code, the PKCE
// verifier and the client secret; a token endpoint answering with a redirect of any kind (307
// and 308 would have the body sent again, the others the Basic credentials to a matching
// host) sends nothing to the redirect's target, and the sign-in ends with an error that says
// so and names no part of the target. Discovery, a public document, still follows a redirect
// egress allows.
func TestCodeExchangeFollowsNoRedirect(t *testing.T) {
	t.Parallel()
	target := redirecttest.NewTarget(t)
	var status atomic.Int64
	issuerSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iss := "http://" + r.Host
		switch r.URL.Path {
		case "/moved/.well-known/openid-configuration":
			http.Redirect(w, r, "/.well-known/openid-configuration", http.StatusFound)
		case "/.well-known/openid-configuration":
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q}`,
				iss, iss+"/authorize", iss+"/token", iss+"/keys")
		case "/token":
			http.Redirect(w, r, target.Location("/token"), int(status.Load()))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(issuerSrv.Close)
	ring := testRing(t)
	s := NewSignIn(SignInConfig{Issuer: issuerSrv.URL, ClientID: "gw", ClientSecret: "client-secret-9kX2",
		RedirectURL: "https://gw.example/callback", SessionTTL: time.Hour}, ring, nil, nil)
	for _, code := range redirecttest.Codes() {
		status.Store(int64(code))
		val, err := s.seal(s.logins, login{State: "st", Nonce: "n", Verifier: "v", Return: "/", Expiry: time.Now().Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/callback?state=st&code=the-code", nil)
		r.AddCookie(&http.Cookie{Name: loginCookie, Value: val})
		_, err = s.Finish(httptest.NewRecorder(), r)
		var ue *UnreachableError
		if !errors.As(err, &ue) {
			t.Errorf("token endpoint answering %d: %v; want an UnreachableError", code, err)
		}
		if msg := target.Refused(err, code); msg != "" {
			t.Errorf("token endpoint answering %d: %s", code, msg)
		}
	}
	target.Unreached(t)
	if _, _, err := ProbeSignIn(t.Context(), issuerSrv.URL+"/moved"); err == nil || !strings.Contains(err.Error(), "did not match the issuer URL returned") {
		// go-oidc refuses the document (its issuer is not the URL asked), which it read
		// only by following the redirect.
		t.Errorf("discovery redirected within the issuer: %v; want the document read (and its issuer refused)", err)
	}
}
