package authz

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// TestNumericDatesAtTheirEdges sends signed tokens whose exp and nbf sit at and across the
// skew's edges and beyond what an int64 holds. A date past the year 9999 is refused as a
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
