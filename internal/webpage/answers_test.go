package webpage

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestIssuerAnswersBounded: what the sign-in reads of its issuer is bounded and what it logs
// of it is the issuer's status and error code alone. A discovery document over the bound ends
// the discovery with an error saying so (go-oidc would read it whole); a failed discovery's
// body, and a token endpoint's error description, which a server may fill with what it was
// sent (here the client secret and the code), and the query of a refused redirect's target,
// appear in no error.
func TestIssuerAnswersBounded(t *testing.T) {
	t.Parallel()
	const echo = "client-secret-9kX2 the-code-6hQ"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iss := "http://" + r.Host + strings.TrimSuffix(r.URL.Path, "/.well-known/openid-configuration")
		switch r.URL.Path {
		case "/big/.well-known/openid-configuration":
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q,"pad":"%s"}`,
				iss, iss+"/authorize", iss+"/token", iss+"/keys", strings.Repeat("x", maxIssuerAnswerBytes))
		case "/moved/.well-known/openid-configuration":
			http.Redirect(w, r, "https://169.254.169.254/.well-known/openid-configuration?key=s3cr3t-q7Zr", http.StatusFound)
		case "/failing/.well-known/openid-configuration":
			http.Error(w, "server error while handling "+echo, http.StatusInternalServerError)
		case "/refusing/.well-known/openid-configuration":
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q}`,
				iss, iss+"/authorize", iss+"/token", iss+"/keys")
		case "/refusing/token":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprintf(w, `{"error":"invalid_grant","error_description":"no such code for %s"}`, echo)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	discover := func(path string) error {
		_, err := (&issuer{url: srv.URL + path, client: issuerClient(srv.URL, nil), now: time.Now}).get(t.Context())
		return err
	}
	if err := discover("/big"); !errors.Is(err, errAnswerTooLarge) && (err == nil || !strings.Contains(err.Error(), errAnswerTooLarge.Error())) {
		t.Errorf("a discovery document over %d bytes: %v; want refused as too large", maxIssuerAnswerBytes, err)
	}
	if err := discover("/failing"); err == nil || strings.Contains(err.Error(), "client-secret") || !strings.Contains(err.Error(), "500") {
		t.Errorf("a failed discovery: %v; want an error naming the status and none of the body", err)
	}
	if err := discover("/moved"); err == nil || strings.Contains(err.Error(), "q7Zr") {
		t.Errorf("a discovery redirected to the metadata service: %v; want refused, naming no query", err)
	}
	ring := testRing(t)
	s := NewSignIn(SignInConfig{Issuer: srv.URL + "/refusing", ClientID: "gw", ClientSecret: "client-secret-9kX2",
		RedirectURL: "https://gw.example/callback", SessionTTL: time.Hour}, ring, nil, nil)
	val, err := s.seal(s.logins, login{State: "st", Nonce: "n", Verifier: "v", Return: "/", Expiry: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/callback?state=st&code=the-code-6hQ", nil)
	r.AddCookie(&http.Cookie{Name: loginCookie, Value: val})
	_, err = s.Finish(httptest.NewRecorder(), r)
	var failed *ErrSignIn
	if !errors.As(err, &failed) || strings.Contains(err.Error(), "client-secret") || strings.Contains(err.Error(), "6hQ") ||
		!strings.Contains(err.Error(), "HTTP 400, error invalid_grant") {
		t.Errorf("a refused code: %v; want ErrSignIn naming the status and code, none of the description", err)
	}
}

// TestTokenRefusalNamesNoQuery: an identity token that fails to verify is logged with a reason
// of the gateway's own, never go-oidc's text, which names the key set's URL whole (its query,
// an API key some providers put there) and the key set's answer. Here the key set's URL
// carries a secret in its query and the key set answers an error echoing it, or redirects.
func TestTokenRefusalNamesNoQuery(t *testing.T) {
	t.Parallel()
	b64 := base64.RawURLEncoding.EncodeToString
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iss := "http://" + r.Host + "/" + strings.Split(r.URL.Path, "/")[1]
		switch {
		case strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration"):
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q}`,
				iss, iss+"/authorize", iss+"/token", "http://user:s3cr3t-q7Zr@"+r.Host+iss[len("http://")+len(r.Host):]+"/keys?key=s3cr3t-q7Zr")
		case strings.HasSuffix(r.URL.Path, "/token"):
			idt := b64([]byte(`{"alg":"RS256","kid":"k1"}`)) + "." +
				b64(fmt.Appendf(nil, `{"iss":%q,"aud":"gw","sub":"u","nonce":"n","exp":%d}`, iss, time.Now().Add(time.Hour).Unix())) +
				"." + b64([]byte("not-a-signature"))
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"access_token":"at","token_type":"Bearer","id_token":%q}`, idt)
		case r.URL.Path == "/failing/keys":
			http.Error(w, "no key set at "+r.URL.String(), http.StatusBadGateway)
		case r.URL.Path == "/moved/keys":
			http.Redirect(w, r, "https://169.254.169.254/keys?key=s3cr3t-q7Zr", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	ring := testRing(t)
	for _, path := range []string{"/failing", "/moved"} {
		s := NewSignIn(SignInConfig{Issuer: srv.URL + path, ClientID: "gw", ClientSecret: "cs",
			RedirectURL: "https://gw.example/callback", SessionTTL: time.Hour}, ring, nil, nil)
		val, err := s.seal(s.logins, login{State: "st", Nonce: "n", Verifier: "v", Return: "/", Expiry: time.Now().Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/callback?state=st&code=c", nil)
		r.AddCookie(&http.Cookie{Name: loginCookie, Value: val})
		_, err = s.Finish(httptest.NewRecorder(), r)
		var failed *ErrSignIn
		if !errors.As(err, &failed) || !errors.Is(err, errTokenInvalid) || strings.Contains(err.Error(), "q7Zr") ||
			!strings.Contains(err.Error(), "key set") {
			t.Errorf("%s: a key set that cannot be fetched: %v; want ErrSignIn naming the key set and no query", path, err)
		}
	}
}
