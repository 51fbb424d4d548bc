package authz

import (
	"context"
	"errors"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// TestKnownOnly: under KnownOnly a token verified before is accepted as usual, and any other
// (a good one never seen, one of an unknown key, a forged one) is refused with ErrNotVerified
// without being checked: with the issuer down, checking would have failed otherwise.
func TestKnownOnly(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	known := mint(t, iss, devissuer.Claims{"sub": "alice"})
	wantAuth(t, a, known, nil, ReasonNone)
	iss.SetDown(true)
	ctx := KnownOnly(context.Background())
	if p, err := a.Authenticate(ctx, known); err != nil || p.Subject != "alice" {
		t.Fatalf("known token: %v", err)
	}
	for name, tok := range map[string]string{
		"new good token": mint(t, iss, devissuer.Claims{"sub": "bob"}),
		"unknown key":    mintUnknownKey(t, iss, devissuer.Claims{"sub": "bob"}),
		"tampered":       known[:len(known)-4] + "AAAA",
	} {
		if _, err := a.Authenticate(ctx, tok); !errors.Is(err, ErrNotVerified) {
			t.Errorf("%s: %v, want ErrNotVerified", name, err)
		}
	}
}

// TestKnownOnlyDPoP: a DPoP-bound token never verified is refused before its proof is checked;
// one verified before goes on to its proof.
func TestKnownOnlyDPoP(t *testing.T) {
	f := newDPoPFixture(t, nil)
	h := newHolder(t)
	tok := f.bound(t, h.jkt)
	ctx := KnownOnly(context.Background())
	req := func(proof string) DPoPRequest {
		return DPoPRequest{Token: tok, Proofs: []string{proof}, Method: "POST", URL: testResource}
	}
	if _, _, err := f.svc.AuthenticateDPoP(ctx, req("not a proof")); !errors.Is(err, ErrNotVerified) {
		t.Fatalf("unknown token: %v, want ErrNotVerified before the proof", err)
	}
	if _, _, err := f.present(tok, h.proof(t, f.clk, tok, nil)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.svc.AuthenticateDPoP(ctx, req(h.proof(t, f.clk, tok, nil))); err != nil {
		t.Fatalf("known token with a good proof: %v", err)
	}
	if _, _, err := f.svc.AuthenticateDPoP(ctx, req("not a proof")); errors.Is(err, ErrNotVerified) || Reason(err) != ReasonDPoPProof {
		t.Fatalf("known token with a bad proof: %v, want the proof's refusal", err)
	}
}
