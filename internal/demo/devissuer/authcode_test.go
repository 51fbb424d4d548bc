package devissuer

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

const (
	webClientID = "approval"
	redirectURI = "http://127.0.0.1:1/callback"
)

// signInFixture is an issuer with one public and one confidential web client, the relying
// party's view of it (go-oidc discovery, x/oauth2) and a browser-like HTTP client that does not
// follow redirects.
type signInFixture struct {
	iss      *Issuer
	provider *oidc.Provider
	browser  *http.Client
	clock    *mcptest.Clock
}

func newSignInFixture(t *testing.T) *signInFixture {
	t.Helper()
	f := &signInFixture{clock: mcptest.NewClock(time.Now())}
	f.iss = startIssuer(t, Options{
		Audience: "https://gw.example/mcp",
		Now:      f.clock.Now,
		WebClients: map[string]WebClient{
			webClientID:    {RedirectURIs: []string{redirectURI}},
			"confidential": {Secret: "s3cret", RedirectURIs: []string{redirectURI}},
		},
		Users: map[string]Claims{"alice": {"scope": "notes:write", "name": "Alice"}, "bob": {}},
	})
	p, err := oidc.NewProvider(context.Background(), f.iss.URL())
	if err != nil {
		t.Fatalf("discovery through go-oidc: %v", err)
	}
	f.provider = p
	f.browser = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return f
}

func (f *signInFixture) config(clientID, secret string) *oauth2.Config {
	return &oauth2.Config{ClientID: clientID, ClientSecret: secret, Endpoint: f.provider.Endpoint(),
		RedirectURL: redirectURI, Scopes: []string{oidc.ScopeOpenID, "profile"}}
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// signIn opens authURL, reads the form as a browser would, submits it as user and returns the
// response to the submission.
func (f *signInFixture) signIn(t *testing.T, authURL, user string) *http.Response {
	t.Helper()
	res, err := f.browser.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="username"`) {
		t.Fatalf("sign-in page: %d\n%s", res.StatusCode, body)
	}
	form := url.Values{"username": {user}}
	for _, m := range hiddenInput.FindAllStringSubmatch(string(body), -1) {
		form.Set(m[1], strings.ReplaceAll(m[2], "&amp;", "&"))
	}
	res, err = f.browser.PostForm(f.provider.Endpoint().AuthURL, form)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// code signs user in and returns the code sent back to the redirect URI, checking the state.
func (f *signInFixture) code(t *testing.T, cfg *oauth2.Config, user, verifier, nonce string) string {
	t.Helper()
	res := f.signIn(t, cfg.AuthCodeURL("st-1", oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce)), user)
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || err != nil || !strings.HasPrefix(loc.String(), redirectURI+"?") {
		t.Fatalf("after sign-in: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if loc.Query().Get("state") != "st-1" || loc.Query().Get("code") == "" {
		t.Fatalf("redirect %s lacks the state or a code", loc)
	}
	return loc.Query().Get("code")
}

// TestAuthorizationCodeFlow: a relying party built on go-oidc and x/oauth2 signs a user in
// with PKCE, public or confidential, and verifies the ID token (signature, issuer, audience,
// expiry, nonce); the access token carries the user's claims for the default audience.
func TestAuthorizationCodeFlow(t *testing.T) {
	f := newSignInFixture(t)
	for _, c := range []struct{ id, secret string }{{webClientID, ""}, {"confidential", "s3cret"}} {
		t.Run(c.id, func(t *testing.T) {
			cfg := f.config(c.id, c.secret)
			verifier := oauth2.GenerateVerifier()
			code := f.code(t, cfg, "alice", verifier, "n-1")
			tok, err := cfg.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
			if err != nil {
				t.Fatalf("exchange: %v", err)
			}
			raw, _ := tok.Extra("id_token").(string)
			idt, err := f.provider.Verifier(&oidc.Config{ClientID: c.id}).Verify(context.Background(), raw)
			if err != nil {
				t.Fatalf("ID token: %v", err)
			}
			var claims struct {
				Username string `json:"preferred_username"`
				Name     string `json:"name"`
				Scope    string `json:"scope"`
			}
			if err := idt.Claims(&claims); err != nil || idt.Subject != "alice" || idt.Nonce != "n-1" ||
				claims.Username != "alice" || claims.Name != "Alice" || claims.Scope != "" {
				t.Fatalf("ID token sub %q nonce %q claims %+v (%v)", idt.Subject, idt.Nonce, claims, err)
			}
			if err := verify(t, fetchKeys(t, f.iss), tok.AccessToken); err != nil {
				t.Fatalf("access token: %v", err)
			}
			access := mcptest.JWTClaims(t, tok.AccessToken)
			if access["sub"] != "alice" || access["scope"] != "notes:write" || access["aud"] != "https://gw.example/mcp" {
				t.Fatalf("access token claims %v", access)
			}
		})
	}
}

// TestAuthorizationCodeRefusals: every way a code exchange or a sign-in can be wrong is
// refused, and a code works once.
func TestAuthorizationCodeRefusals(t *testing.T) {
	f := newSignInFixture(t)
	cfg := f.config(webClientID, "")
	exchange := func(cfg *oauth2.Config, code, verifier string) error {
		_, err := cfg.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
		return err
	}
	wantGrantError := func(t *testing.T, err error, code string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), code) {
			t.Fatalf("exchange: %v, want %s", err, code)
		}
	}
	t.Run("wrong verifier", func(t *testing.T) {
		code := f.code(t, cfg, "bob", oauth2.GenerateVerifier(), "n")
		wantGrantError(t, exchange(cfg, code, oauth2.GenerateVerifier()), "invalid_grant")
	})
	t.Run("code used twice", func(t *testing.T) {
		v := oauth2.GenerateVerifier()
		code := f.code(t, cfg, "bob", v, "n")
		if err := exchange(cfg, code, v); err != nil {
			t.Fatal(err)
		}
		wantGrantError(t, exchange(cfg, code, v), "invalid_grant")
	})
	t.Run("expired code", func(t *testing.T) {
		v := oauth2.GenerateVerifier()
		code := f.code(t, cfg, "bob", v, "n")
		f.clock.Advance(codeTTL)
		wantGrantError(t, exchange(cfg, code, v), "invalid_grant")
	})
	t.Run("another client's code", func(t *testing.T) {
		v := oauth2.GenerateVerifier()
		code := f.code(t, cfg, "bob", v, "n")
		wantGrantError(t, exchange(f.config("confidential", "s3cret"), code, v), "invalid_grant")
	})
	t.Run("wrong client secret", func(t *testing.T) {
		v := oauth2.GenerateVerifier()
		code := f.code(t, cfg, "bob", v, "n")
		wantGrantError(t, exchange(f.config("confidential", "nope"), code, v), "invalid_client")
	})
	t.Run("unknown user", func(t *testing.T) {
		res := f.signIn(t, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "mallory")
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Unknown user") {
			t.Fatalf("%d %s", res.StatusCode, body)
		}
	})
	for _, tt := range []struct {
		name, query, status, errCode string
	}{
		{"unregistered redirect URI", "client_id=approval&redirect_uri=http://evil.example/cb&response_type=code", "400", ""},
		{"unknown client", "client_id=nobody&redirect_uri=" + redirectURI + "&response_type=code", "400", ""},
		{"no PKCE", "client_id=approval&redirect_uri=" + redirectURI + "&response_type=code&scope=openid", "303", "invalid_request"},
		{"plain PKCE", "client_id=approval&redirect_uri=" + redirectURI + "&response_type=code&scope=openid&code_challenge_method=plain&code_challenge=" + strings.Repeat("a", 43), "303", "invalid_request"},
		{"implicit flow", "client_id=approval&redirect_uri=" + redirectURI + "&response_type=token&scope=openid", "303", "unsupported_response_type"},
		{"not OpenID", "client_id=approval&redirect_uri=" + redirectURI + "&response_type=code&scope=profile&code_challenge_method=S256&code_challenge=" + strings.Repeat("a", 43), "303", "invalid_scope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.browser.Get(f.iss.AuthorizeURL() + "?" + tt.query + "&state=s")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			loc := res.Header.Get("Location")
			if res.Status[:3] != tt.status || (tt.errCode == "" && loc != "") ||
				(tt.errCode != "" && (!strings.HasPrefix(loc, redirectURI) || !strings.Contains(loc, "error="+tt.errCode) || !strings.Contains(loc, "state=s"))) {
				t.Fatalf("%s to %q, want %s %s", res.Status, loc, tt.status, tt.errCode)
			}
		})
	}
}

// TestAuthorizationCodeOff: without web clients nothing of the flow is served or advertised.
func TestAuthorizationCodeOff(t *testing.T) {
	iss := startIssuer(t, Options{})
	var doc map[string]any
	getJSON(t, iss.URL()+discoveryPath, &doc)
	if _, ok := doc["authorization_endpoint"]; ok || iss.AuthorizeURL() != "" {
		t.Fatalf("advertised without web clients: %v", doc)
	}
	res, err := http.Get(iss.URL() + authorizePath)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("authorize without web clients: %d", res.StatusCode)
	}
}
