package authz

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

const testResource = "https://mcp.example.test/mcp"

// newClock returns the manual clock shared by the issuer and the authenticator.
func newClock() *mcptest.Clock { return mcptest.NewClock(time.Unix(1_900_000_000, 0)) }

func startIssuer(t testing.TB, clk *mcptest.Clock) *devissuer.Issuer {
	t.Helper()
	iss, err := devissuer.New(devissuer.Options{Audience: testResource, Now: clk.Now})
	if err != nil {
		t.Fatalf("devissuer.New: %v", err)
	}
	t.Cleanup(func() { _ = iss.Close() })
	return iss
}

func newAuth(t testing.TB, cfg Config, clk *mcptest.Clock) *Authenticator {
	t.Helper()
	a, err := NewAuthenticator(cfg, Options{ResourceURI: testResource, Now: clk.Now})
	if err != nil {
		t.Fatalf("NewAuthenticator: %v", err)
	}
	return a
}

func mint(t testing.TB, iss *devissuer.Issuer, claims devissuer.Claims) string {
	t.Helper()
	tok, err := iss.Mint(claims)
	if err != nil {
		t.Fatalf("Mint: %v", err)
	}
	return tok
}

// wantAuth checks an Authenticate outcome: wantErr nil means success.
func wantAuth(t *testing.T, a *Authenticator, tok string, wantErr error, wantReason string) *Principal {
	t.Helper()
	p, err := a.Authenticate(context.Background(), tok)
	if !errors.Is(err, wantErr) || (wantErr == nil && err != nil) {
		t.Fatalf("Authenticate error = %v, want %v", err, wantErr)
	}
	if got := Reason(err); got != wantReason {
		t.Fatalf("Reason = %q, want %q (err %v)", got, wantReason, err)
	}
	if wantErr == nil && p == nil {
		t.Fatal("no principal")
	}
	return p
}

func mintUnknownKey(t testing.TB, iss *devissuer.Issuer, claims devissuer.Claims) string {
	t.Helper()
	tok, err := iss.MintUnknownKey(claims)
	if err != nil {
		t.Fatalf("MintUnknownKey: %v", err)
	}
	return tok
}
