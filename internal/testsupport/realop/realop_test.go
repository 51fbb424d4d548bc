package realop_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

const resource = "https://mcp.test.invalid/mcp"

func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func token(t *testing.T, p *realop.Provider) string {
	t.Helper()
	tok, err := p.Token(bounded(t))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestTokensVerify: the example OP's JWT access tokens pass or fail the
// gateway's authenticator exactly on their audience, with the default
// audience (the client id) and with a configured one (the gateway's URI).
func TestTokensVerify(t *testing.T) {
	withAud := realop.Start(t, realop.Options{Audience: resource})
	plain := realop.Start(t, realop.Options{})
	tests := []struct {
		name      string
		provider  *realop.Provider
		audiences []string // the gateway's accepted audiences; nil: resource
		wantAud   string
		reason    string
	}{
		{"configured audience", withAud, nil, resource, authz.ReasonNone},
		{"client id audience refused", plain, nil, "", authz.ReasonAudience},
		{"client id audience accepted when listed", plain, []string{realop.ServiceClientID}, realop.ServiceClientID, authz.ReasonNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := authz.NewAuthenticator(authz.Config{
				Issuers: []authz.IssuerConfig{{Issuer: tt.provider.Issuer(), Audiences: tt.audiences}},
			}, authz.Options{ResourceURI: resource})
			if err != nil {
				t.Fatal(err)
			}
			p, err := a.Authenticate(bounded(t), token(t, tt.provider))
			if got := authz.Reason(err); got != tt.reason {
				t.Fatalf("Authenticate: reason %q (err %v), want %q", got, err, tt.reason)
			}
			if err != nil {
				return
			}
			if p.Issuer != tt.provider.Issuer() || p.Subject != realop.ServiceClientID || p.Claims["client_id"] != realop.ServiceClientID {
				t.Errorf("principal = %s/%s claims %v", p.Issuer, p.Subject, p.Claims)
			}
			if !audienceHas(p.Claims["aud"], tt.wantAud) {
				t.Errorf("aud = %v, want %s", p.Claims["aud"], tt.wantAud)
			}
		})
	}
}

func audienceHas(aud any, want string) bool {
	switch v := aud.(type) {
	case string:
		return v == want
	case []any:
		for _, a := range v {
			if a == want {
				return true
			}
		}
	}
	return false
}

// TestTokenIsJWT: the override took effect; the example's default would be
// an opaque token, which a resource server cannot verify on its own.
func TestTokenIsJWT(t *testing.T) {
	p := realop.Start(t, realop.Options{})
	if tok := token(t, p); strings.Count(tok, ".") != 2 || !strings.HasPrefix(tok, "eyJ") {
		t.Fatalf("access token is not a compact JWS (%d bytes)", len(tok))
	}
}

// TestWrongSecretRefused: the provider authenticates the client; a wrong
// secret yields no token.
func TestWrongSecretRefused(t *testing.T) {
	p := realop.Start(t, realop.Options{})
	tok, err := p.TokenFor(bounded(t), realop.ServiceClientID, "not-the-secret")
	if !errors.Is(err, realop.ErrTokenRequest) || tok != "" {
		t.Fatalf("TokenFor with a wrong secret: token %d bytes, err %v", len(tok), err)
	}
}
