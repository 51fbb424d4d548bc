package authz

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// TestNumericDatesAtTheirEdges sends signed tokens whose exp, nbf and iat sit at and across the
// skew's edges and beyond what an int64 holds. A token issued further in the future than the
// skew is refused (go-oidc does not check iat). A date past the year 9999 is refused as a
// malformed claim: from 2^63 on Go's float-to-int conversion is implementation-defined, which
// read an nbf of 1e19 as the distant past and let the token in.
func TestNumericDatesAtTheirEdges(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	now := clk.Now()
	skew := DefaultClockSkew
	unix := func(d time.Duration) int64 { return now.Add(d).Unix() }
	tests := []struct {
		name    string
		claims  devissuer.Claims
		wantErr error
		reason  string
	}{
		{"nbf 1e19", devissuer.Claims{"nbf": 1e19}, ErrInvalidToken, ReasonClaims},
		{"nbf 2^63-1", devissuer.Claims{"nbf": json.Number("9223372036854775807")}, ErrInvalidToken, ReasonClaims},
		{"nbf 1e300", devissuer.Claims{"nbf": 1e300}, ErrInvalidToken, ReasonClaims},
		{"nbf 2^62", devissuer.Claims{"nbf": json.Number("4611686018427387904")}, ErrInvalidToken, ReasonClaims},
		{"nbf year 9999", devissuer.Claims{"nbf": 253402300799}, ErrInvalidToken, ReasonNotYetValid},
		{"nbf -1e300", devissuer.Claims{"nbf": -1e300}, nil, ReasonNone},
		{"nbf at the skew", devissuer.Claims{"nbf": unix(skew)}, nil, ReasonNone},
		{"nbf a second past the skew", devissuer.Claims{"nbf": unix(skew + time.Second)}, ErrInvalidToken, ReasonNotYetValid},
		{"nbf as a string", devissuer.Claims{"nbf": "1"}, ErrInvalidToken, ReasonClaims},
		{"exp 2^62", devissuer.Claims{"exp": json.Number("4611686018427387904")}, ErrInvalidToken, ReasonClaims},
		{"exp 1e19", devissuer.Claims{"exp": 1e19}, ErrInvalidToken, ReasonClaims},
		{"exp year 9999", devissuer.Claims{"exp": 253402300799}, nil, ReasonNone},
		{"exp -1e300", devissuer.Claims{"exp": -1e300}, ErrInvalidToken, ReasonExpired},
		{"exp at the skew", devissuer.Claims{"exp": unix(-skew)}, nil, ReasonNone},
		{"exp a second past the skew", devissuer.Claims{"exp": unix(-skew - time.Second)}, ErrInvalidToken, ReasonExpired},
		{"exp as a string", devissuer.Claims{"exp": "99999999999"}, ErrInvalidToken, ReasonClaims},
		{"iat an hour ahead", devissuer.Claims{"iat": unix(time.Hour)}, ErrInvalidToken, ReasonIssuedInFuture},
		{"iat at the skew", devissuer.Claims{"iat": unix(skew)}, nil, ReasonNone},
		{"iat a second past the skew", devissuer.Claims{"iat": unix(skew + time.Second)}, ErrInvalidToken, ReasonIssuedInFuture},
		{"iat year 9999", devissuer.Claims{"iat": 253402300799}, ErrInvalidToken, ReasonIssuedInFuture},
		{"iat 1e19", devissuer.Claims{"iat": 1e19}, ErrInvalidToken, ReasonClaims},
		{"iat as a string", devissuer.Claims{"iat": "1"}, ErrInvalidToken, ReasonClaims},
		{"iat an hour ago", devissuer.Claims{"iat": unix(-time.Hour)}, nil, ReasonNone},
		{"no iat", devissuer.Claims{"iat": nil}, nil, ReasonNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantAuth(t, a, mint(t, iss, tt.claims), tt.wantErr, tt.reason)
		})
	}
}

// TestCachedExpiryIsTheCheckedOne: the cache serves a token until the very exp the verifier
// checked, read the same way.
func TestCachedExpiryIsTheCheckedOne(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	exp := float64(clk.Now().Add(time.Minute).Unix()) + 0.75
	p := wantAuth(t, a, mint(t, iss, devissuer.Claims{"exp": exp}), nil, ReasonNone)
	if want := time.Unix(int64(exp), 0); !p.ExpiresAt.Equal(want) {
		t.Fatalf("ExpiresAt = %v, want %v", p.ExpiresAt, want)
	}
}

// TestIssuedInTheFutureChallenge: a token issued further in the future than the clock skew is
// refused with a 401 invalid_token challenge that says so in a fixed text, never the token; the
// same token is accepted once the gateway's clock has caught up with it, so the refusal is of
// the time and not of the token.
func TestIssuedInTheFutureChallenge(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	svc, err := New(Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, Options{ResourceURI: testResource, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	tok := mint(t, iss, devissuer.Claims{"iat": clk.Now().Add(time.Hour).Unix(), "exp": clk.Now().Add(2 * time.Hour).Unix()})
	_, err = svc.Authenticate(context.Background(), tok)
	if !errors.Is(err, ErrInvalidToken) || Reason(err) != ReasonIssuedInFuture {
		t.Fatalf("Authenticate = %v (reason %q), want invalid_token, %s", err, Reason(err), ReasonIssuedInFuture)
	}
	cs := svc.Unauthorized(err)
	if len(cs) != 1 || cs[0].Error != ChallengeInvalidToken || !strings.Contains(cs[0].Description, "issued in the future") {
		t.Fatalf("challenges %+v, want one invalid_token saying the token was issued in the future", cs)
	}
	h := cs[0].Header()
	for _, part := range strings.Split(tok, ".") {
		if strings.Contains(h, part) || strings.Contains(err.Error(), part) {
			t.Fatalf("the refusal echoes the token: %q / %v", h, err)
		}
	}
	clk.Advance(time.Hour)
	if _, err := svc.Authenticate(context.Background(), tok); err != nil {
		t.Fatalf("the same token once its iat has come: %v", err)
	}
}
