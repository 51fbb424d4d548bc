package webpage

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// TestIDTokenOfAnotherType: an ID token the issuer signed with its real keys, for this client
// and this sign-in's nonce, is refused when its header types it as another kind of JWT (an
// access token, a logout token, a DPoP proof, a security event) or carries crit or b64, as
// Authenticate refuses such access tokens; before, go-oidc's verifier read no header member and
// the sign-in page took any of them for the user's identity. JWT in any case, with or without
// "application/", and no typ at all are accepted.
func TestIDTokenOfAnotherType(t *testing.T) {
	t.Parallel()
	iss, err := devissuer.New(devissuer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = iss.Close() })
	header := make(chan devissuer.Claims, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		self := "http://" + r.Host
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_, _ = fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q}`,
				self, self+"/authorize", self+"/token", iss.JWKSURL())
		case "/token":
			idt, err := iss.MintHeader(<-header, devissuer.Claims{"iss": self, "aud": "gw", "sub": "u", "nonce": "n"})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			_, _ = fmt.Fprintf(w, `{"access_token":"at","token_type":"Bearer","id_token":%q}`, idt)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	ring := testRing(t)
	s := NewSignIn(SignInConfig{Issuer: srv.URL, ClientID: "gw", ClientSecret: "cs",
		RedirectURL: "https://gw.example/callback", SessionTTL: time.Hour}, ring, nil, nil)
	finish := func(h devissuer.Claims) error {
		val, err := s.seal(s.logins, login{State: "st", Nonce: "n", Verifier: "v", Return: "/", Expiry: time.Now().Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		header <- h
		r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/callback?state=st&code=c", nil)
		r.AddCookie(&http.Cookie{Name: loginCookie, Value: val})
		_, err = s.Finish(httptest.NewRecorder(), r)
		return err
	}
	for _, h := range []devissuer.Claims{{"typ": "JWT"}, {"typ": "jwt"}, {"typ": "application/JWT"}, {"typ": "JOSE"}, {"typ": nil}} {
		if err := finish(h); err != nil {
			t.Errorf("an ID token with header %v: %v; want accepted", h, err)
		}
	}
	for _, h := range []devissuer.Claims{
		{"typ": "at+jwt"}, {"typ": "application/at+jwt"}, {"typ": "application/okta-internal-at+jwt"},
		{"typ": "logout+jwt"}, {"typ": "dpop+jwt"}, {"typ": "secevent+jwt"}, {"typ": 1},
		{"b64": true}, {"crit": []string{"exp"}, "exp": 1},
	} {
		err := finish(h)
		var failed *ErrSignIn
		if !errors.As(err, &failed) || !errors.Is(err, errTokenInvalid) {
			t.Errorf("an ID token with header %v: %v; want refused as an invalid identity token", h, err)
		} else if strings.Contains(err.Error(), "nonce") {
			t.Errorf("an ID token with header %v: refused for its nonce, not its header: %v", h, err)
		}
	}
}
