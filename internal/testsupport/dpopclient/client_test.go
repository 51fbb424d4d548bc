package dpopclient

import (
	"errors"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz/dpop"
)

// TestLibraryAndForge: the library's proofs of each algorithm it supports verify, with the
// thumbprint it computed; Forge without changes makes a valid proof with the same key, and with
// one change an invalid one.
func TestLibraryAndForge(t *testing.T) {
	c := Start(t)
	v, err := dpop.NewVerifier(dpop.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://mcp.example.com/mcp"
	req := dpop.Request{Method: "POST", URL: url, AccessToken: "tok", Now: time.Now()}
	for _, alg := range []string{"ES256", "PS256", "RS256", "Ed25519"} {
		k := c.NewKey(t, alg)
		p, err := v.Verify(c.Proof(t, k, Proof{Method: "POST", URL: url, AccessToken: "tok"}), req)
		if err != nil || p.JKT != k.JKT {
			t.Errorf("%s: %v, jkt %v want %s", alg, err, p, k.JKT)
		}
	}
	k := c.NewKey(t, "ES256")
	if p, err := v.Verify(Forge(t, k, Proof{Method: "POST", URL: url, AccessToken: "tok"}, time.Now(), nil), req); err != nil || p.JKT != k.JKT {
		t.Errorf("forged valid proof: %v", err)
	}
	bad := Forge(t, k, Proof{Method: "POST", URL: url, AccessToken: "tok"}, time.Now(), func(h, _ map[string]any) { h["typ"] = "jwt" })
	if _, err := v.Verify(bad, req); !errors.Is(err, dpop.ErrInvalidProof) {
		t.Errorf("forged typ jwt: %v", err)
	}
	stale := c.Proof(t, k, Proof{Method: "POST", URL: url, AccessToken: "tok", Skew: -303 * time.Second})
	if _, err := v.Verify(stale, req); !errors.Is(err, dpop.ErrInvalidProof) {
		t.Errorf("library proof with iat -303s: %v", err)
	}
}
