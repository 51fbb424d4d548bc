package authz

import (
	"encoding/base64"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// TestTokenHeaderTyping: tokens signed by the trusted issuer, with the gateway's audience, whose
// header types them as another kind of JWT (a DPoP proof, a logout or security event token, a
// signed introspection response, an identity assertion grant), or as no media type at all, are
// refused; the types access tokens carry (JWT, at+jwt, a vendor's "-at+jwt" such as Okta's
// application/okta-internal-at+jwt, JOSE, in any case, with or without "application/", or none)
// are accepted. A header extension (crit, b64) is refused, whatever it
// names: go-jose honours b64, under which the signature covers other bytes than the claims read.
// A typ claim in the payload, as Keycloak writes one, is a claim and changes nothing.
func TestTokenHeaderTyping(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	accepted := []devissuer.Claims{
		{"typ": nil}, {"typ": "JWT"}, {"typ": "jwt"}, {"typ": "at+jwt"}, {"typ": "AT+JWT"},
		{"typ": "application/at+jwt"}, {"typ": "Application/JWT"}, {"typ": "JOSE"},
		{"typ": "application/okta-internal-at+jwt"}, {"typ": "okta-internal-at+jwt"},
		{"cty": "json"}, {"jku": "https://elsewhere.example/jwks"},
	}
	for _, h := range accepted {
		tok, err := iss.MintHeader(h, devissuer.Claims{"typ": "Bearer"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Authenticate(t.Context(), tok); err != nil {
			t.Errorf("header %v: %v, want accepted", h, err)
		}
	}
	refused := []devissuer.Claims{
		{"typ": "dpop+jwt"}, {"typ": "logout+jwt"}, {"typ": "application/secevent+jwt"},
		{"typ": "token-introspection+jwt"}, {"typ": "oauth-id-jag+jwt"}, {"typ": "application/jwt+at"},
		{"typ": "application/application/jwt"}, {"typ": "jwt "}, {"typ": ""}, {"typ": 7},
		{"typ": []string{"JWT"}}, {"typ": map[string]any{}},
		{"typ": "-at+jwt"}, {"typ": "application/-at+jwt"}, {"typ": "dpop+x-at+jwt"}, {"typ": "a/b-at+jwt"},
		{"typ": "x -at+jwt"},
		{"crit": []string{"b64"}, "b64": false}, {"crit": []string{}}, {"crit": []string{"exp"}, "exp": 1},
		{"b64": true},
	}
	for _, h := range refused {
		tok, err := iss.MintHeader(h, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := a.Authenticate(t.Context(), tok)
		if Reason(err) != ReasonMalformed {
			t.Errorf("header %v: %v (principal %v), want refused as %s", h, err, p != nil, ReasonMalformed)
		}
	}
}

// TestIDTokenHeaderNamesOnce: an ID token's header naming typ twice, or in two cases, is
// refused, as an access token's is (checkNames): a reader keeping the first typ, or matching
// names in any case, would see the logout token that the last exact "typ" hides.
func TestIDTokenHeaderNamesOnce(t *testing.T) {
	t.Parallel()
	for _, hdr := range []string{
		`{"alg":"RS256","typ":"logout+jwt","typ":"JWT"}`,
		`{"alg":"RS256","TYP":"logout+jwt","typ":"JWT"}`,
		`{"alg":"RS256","typ":"JWT","Typ":"at+jwt"}`,
	} {
		raw := base64.RawURLEncoding.EncodeToString([]byte(hdr)) + ".e30.sig"
		if err := CheckIDTokenHeader(raw); err == nil {
			t.Errorf("header %s: accepted; want refused", hdr)
		}
	}
	ok := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + ".e30.sig"
	if err := CheckIDTokenHeader(ok); err != nil {
		t.Errorf("a header naming typ once: %v; want accepted", err)
	}
}
