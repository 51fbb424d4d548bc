package authz

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// TestWeakIssuerKeysIgnored: an RSA key under 2048 bits in an issuer's key set verifies no token
// (RFC 7518 §3.3 and §3.5: RS* and PS* keys MUST be 2048 bits or larger), as a DPoP proof's
// key under that size proves nothing: whoever factors it would mint tokens the gateway takes. The
// key is ignored like any other key the gateway cannot use (RFC 7517 §5), so the rest of the set
// still verifies; an RSA key of 2048 bits and an EC key do.
func TestWeakIssuerKeysIgnored(t *testing.T) {
	clk := newClock()
	rsaKey := func(bits int) crypto.Signer {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		alg  jose.SignatureAlgorithm
		key  crypto.Signer
		want error
	}{
		{"RS256 1024 bits", jose.RS256, rsaKey(1024), ErrInvalidToken},
		{"PS256 1024 bits", jose.PS256, rsaKey(1024), ErrInvalidToken},
		{"RS512 1536 bits", jose.RS512, rsaKey(1536), ErrInvalidToken},
		{"RS256 2040 bits", jose.RS256, rsaKey(2040), ErrInvalidToken},
		{"RS256 2048 bits", jose.RS256, rsaKey(2048), nil},
		{"ES256", jose.ES256, ecKey, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The weak key is published beside a strong one: only the weak key is dropped.
			strong := jose.JSONWebKey{Key: rsaKey(2048).Public(), KeyID: "strong", Algorithm: "RS256", Use: "sig"}
			pub := jose.JSONWebKey{Key: tt.key.Public(), KeyID: "k", Algorithm: string(tt.alg), Use: "sig"}
			doc, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{strong, pub}})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(doc) }))
			t.Cleanup(srv.Close)
			const issuer = "https://issuer.example.test"
			a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: issuer, JWKSURL: srv.URL}}}, clk)
			signer, err := jose.NewSigner(jose.SigningKey{Algorithm: tt.alg, Key: jose.JSONWebKey{Key: tt.key, KeyID: "k"}},
				(&jose.SignerOptions{}).WithType("at+jwt"))
			if err != nil {
				t.Fatal(err)
			}
			claims, _ := json.Marshal(map[string]any{"iss": issuer, "sub": "alice", "aud": testResource,
				"iat": clk.Now().Add(-2 * DefaultJWKSMinRefreshInterval).Unix(), "exp": clk.Now().Add(time.Hour).Unix()})
			jws, err := signer.Sign(claims)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := jws.CompactSerialize()
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Authenticate(t.Context(), tok)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Authenticate = %v, want %v", err, tt.want)
			}
		})
	}
}
