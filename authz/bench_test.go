package authz

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

func benchSetup(b *testing.B, cacheSize int, alg string) (*Authenticator, string) {
	b.Helper()
	clk := newClock()
	iss := startIssuer(b, clk)
	a := newAuth(b, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}, TokenCacheSize: cacheSize}, clk)
	tok, err := iss.MintAlg(alg, devissuer.Claims{"scope": "github:read issues", "groups": []string{"sre"}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.Authenticate(context.Background(), tok); err != nil { // discovery + JWKS
		b.Fatal(err)
	}
	return a, tok
}

func BenchmarkAuthenticateCacheHit(b *testing.B) {
	a, tok := benchSetup(b, DefaultTokenCacheSize, devissuer.RS256)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticateCacheHitParallel is the hit path as the gateway runs
// it: many requests at once, so lock contention on the cache shows.
func BenchmarkAuthenticateCacheHitParallel(b *testing.B) {
	a, tok := benchSetup(b, DefaultTokenCacheSize, devissuer.RS256)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := a.Authenticate(ctx, tok); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkAuthenticateMiss(b *testing.B) {
	for _, alg := range []string{devissuer.RS256, devissuer.ES256} {
		b.Run(alg, func(b *testing.B) {
			a, tok := benchSetup(b, -1, alg)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Authenticate(ctx, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchPolicy(b *testing.B, logger *slog.Logger) (*Policy, *Principal) {
	b.Helper()
	cfg := testPolicyConfig()
	pol, err := NewPolicy(cfg.Policy, logger)
	if err != nil {
		b.Fatal(err)
	}
	return pol, testPrincipal(cfg, map[string]any{"scope": "billing", "tenant": "acme", "org.role": "admin"})
}

func BenchmarkDecide(b *testing.B) {
	loggers := map[string]*slog.Logger{
		"nolog":   nil,
		"jsonlog": slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	for name, logger := range loggers {
		b.Run(name, func(b *testing.B) {
			pol, p := benchPolicy(b, logger)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				// The last rules: every deny and most allows are evaluated.
				if d := pol.Decide(ctx, p, KindTool, "billing", "refund"); d.Effect != Allow {
					b.Fatal(d)
				}
			}
		})
	}
}

func BenchmarkCacheHitAndDecide(b *testing.B) {
	a, tok := benchSetup(b, DefaultTokenCacheSize, devissuer.RS256)
	pol, _ := benchPolicy(b, nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := a.Authenticate(ctx, tok)
		if err != nil {
			b.Fatal(err)
		}
		if d := pol.Decide(ctx, p, KindTool, "github", "get_issue"); d.Effect != Allow {
			b.Fatal(d)
		}
	}
}

func BenchmarkCacheHitAndDecideParallel(b *testing.B) {
	a, tok := benchSetup(b, DefaultTokenCacheSize, devissuer.RS256)
	pol, _ := benchPolicy(b, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			p, err := a.Authenticate(ctx, tok)
			if err != nil {
				b.Error(err)
				return
			}
			if d := pol.Decide(ctx, p, KindTool, "github", "get_issue"); d.Effect != Allow {
				b.Error(d)
				return
			}
		}
	})
}

// BenchmarkAuthenticateDPoP is a DPoP-bound token's request with its proof, the token cached:
// the proof's checks, the token (one hash of it, shared by the proof's ath check and the cache),
// the binding and the replay record in the memory store. Making each proof is not measured.
func BenchmarkAuthenticateDPoP(b *testing.B) {
	f := newDPoPFixture(b, func(c *Config) { c.DPoP.MaxProofsPerCaller = 1 << 30 })
	h := newHolder(b)
	tok := f.bound(b, h.jkt)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		proof := h.proof(b, f.clk, tok, nil)
		b.StartTimer()
		if _, _, err := f.svc.AuthenticateDPoP(ctx, DPoPRequest{Token: tok, Proofs: []string{proof}, Method: "POST", URL: testResource}); err != nil {
			b.Fatal(err)
		}
	}
}
