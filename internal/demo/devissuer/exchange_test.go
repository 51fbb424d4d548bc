package devissuer

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// postToken sends a form to the token endpoint with client_secret_basic and decodes the answer.
func postToken(t *testing.T, iss *Issuer, id, secret string, form url.Values) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, iss.TokenURL(), strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("decoding the token response: %v", err)
	}
	return resp.StatusCode, body
}

func exchangeForm(subject string, mod func(url.Values)) url.Values {
	f := url.Values{
		"grant_type":         {GrantTokenExchange},
		"subject_token":      {subject},
		"subject_token_type": {TokenTypeAccessToken},
		"resource":           {"https://backend.example/mcp"},
		"scope":              {"files:read"},
	}
	if mod != nil {
		mod(f)
	}
	return f
}

func TestTokenExchange(t *testing.T) {
	iss := startIssuer(t, Options{Clients: map[string]string{"gateway": "gw-secret"}, Audience: "https://gateway.example/mcp"})
	subject, err := iss.Mint(Claims{"sub": "alice"})
	if err != nil {
		t.Fatal(err)
	}
	code, body := postToken(t, iss, "gateway", "gw-secret", exchangeForm(subject, nil))
	if code != http.StatusOK || body["token_type"] != "Bearer" || body["issued_token_type"] != TokenTypeAccessToken {
		t.Fatalf("exchange = %d %v", code, body)
	}
	tok, _ := body["access_token"].(string)
	if tok == subject {
		t.Fatal("the exchange returned the subject token itself")
	}
	if err := verify(t, fetchKeys(t, iss), tok); err != nil {
		t.Fatalf("the exchanged token does not verify: %v", err)
	}
	c := mcptest.JWTClaims(t, tok) // unverified: verify checks the signature separately
	act, _ := c["act"].(map[string]any)
	if c["sub"] != "alice" || c["aud"] != "https://backend.example/mcp" || c["scope"] != "files:read" || act["sub"] != "gateway" {
		t.Fatalf("exchanged claims = %v", c)
	}
}

// TestTokenExchangeKeepsSubjectScope: without a requested scope, the exchanged token carries the
// subject token's, so two tokens of one user with different scopes get different backend tokens.
func TestTokenExchangeKeepsSubjectScope(t *testing.T) {
	iss := startIssuer(t, Options{Clients: map[string]string{"gateway": "gw-secret"}, Audience: "https://gateway.example/mcp"})
	for _, scope := range []string{"tools:use files:write", "tools:use", ""} {
		claims := Claims{"sub": "alice"}
		if scope != "" {
			claims["scope"] = scope
		}
		subject, err := iss.Mint(claims)
		if err != nil {
			t.Fatal(err)
		}
		code, body := postToken(t, iss, "gateway", "gw-secret", exchangeForm(subject, func(f url.Values) { f.Del("scope") }))
		if code != http.StatusOK {
			t.Fatalf("exchange = %d %v", code, body)
		}
		tok, _ := body["access_token"].(string)
		got, has := mcptest.JWTClaims(t, tok)["scope"]
		if (scope == "" && has) || (scope != "" && got != scope) {
			t.Fatalf("subject scope %q: exchanged scope %v", scope, got)
		}
	}
}

func TestTokenExchangeRefusals(t *testing.T) {
	now := time.Now()
	iss := startIssuer(t, Options{Clients: map[string]string{"gateway": "gw-secret"}, Now: func() time.Time { return now }})
	good, err := iss.Mint(Claims{"sub": "alice"})
	if err != nil {
		t.Fatal(err)
	}
	expired, _ := iss.Mint(Claims{"sub": "alice", "exp": now.Add(-time.Minute).Unix()})
	foreign, _ := iss.MintUnknownKey(Claims{"sub": "alice"})
	forged, _ := iss.MintForeignKeyKnownKID(Claims{"sub": "alice"})
	none, _ := iss.MintNone(Claims{"sub": "alice"})
	confused, _ := iss.MintHS256WithPublicKey(Claims{"sub": "alice"})
	otherIss, _ := iss.Mint(Claims{"sub": "alice", "iss": "https://elsewhere.example"})
	// The good token, signature and all, in the JWS JSON Serialization (RFC 7515 §7.2): not a
	// JWT (RFC 7519 §7.2 requires the Compact one), so not a subject token either.
	p := strings.Split(good, ".")
	jsonJWS := `{"protected":"` + p[0] + `","payload":"` + p[1] + `","signature":"` + p[2] + `"}`
	tests := []struct {
		name, secret string
		form         url.Values
		status       int
		code         string
	}{
		{"wrong client secret", "nope", exchangeForm(good, nil), http.StatusUnauthorized, "invalid_client"},
		{"tampered subject", "gw-secret", exchangeForm(TamperSignature(good), nil), http.StatusBadRequest, "invalid_grant"},
		{"expired subject", "gw-secret", exchangeForm(expired, nil), http.StatusBadRequest, "invalid_grant"},
		{"unknown key", "gw-secret", exchangeForm(foreign, nil), http.StatusBadRequest, "invalid_grant"},
		{"foreign key, known kid", "gw-secret", exchangeForm(forged, nil), http.StatusBadRequest, "invalid_grant"},
		{"alg none", "gw-secret", exchangeForm(none, nil), http.StatusBadRequest, "invalid_grant"},
		{"HS256 confusion", "gw-secret", exchangeForm(confused, nil), http.StatusBadRequest, "invalid_grant"},
		{"other issuer", "gw-secret", exchangeForm(otherIss, nil), http.StatusBadRequest, "invalid_grant"},
		{"JSON-serialized JWS", "gw-secret", exchangeForm(jsonJWS, nil), http.StatusBadRequest, "invalid_grant"},
		{"no target", "gw-secret", exchangeForm(good, func(f url.Values) { f.Del("resource") }), http.StatusBadRequest, "invalid_target"},
		{"two targets", "gw-secret", exchangeForm(good, func(f url.Values) { f.Add("resource", "https://b2.example") }), http.StatusBadRequest, "invalid_target"},
		{"bad subject type", "gw-secret", exchangeForm(good, func(f url.Values) { f.Set("subject_token_type", "x") }), http.StatusBadRequest, "invalid_request"},
		{"refresh token requested", "gw-secret", exchangeForm(good, func(f url.Values) {
			f.Set("requested_token_type", "urn:ietf:params:oauth:token-type:refresh_token")
		}), http.StatusBadRequest, "invalid_request"},
		{"audience instead of resource", "gw-secret", exchangeForm(good, func(f url.Values) {
			f.Del("resource")
			f.Set("audience", "backend")
		}), http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := postToken(t, iss, "gateway", tt.secret, tt.form)
			if status != tt.status || (tt.code != "" && body["error"] != tt.code) {
				t.Fatalf("got %d %v, want %d %q", status, body, tt.status, tt.code)
			}
		})
	}
}
