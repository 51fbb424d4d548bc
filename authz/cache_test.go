package authz

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/devissuer"
)

func TestTokenCacheBounded(t *testing.T) {
	c := newTokenCache(3)
	now := time.Unix(100, 0)
	p := &Principal{ExpiresAt: now.Add(time.Hour)}
	toks := []string{"t1", "t2", "t3", "t4", "t5"}
	for _, tok := range toks[:3] {
		c.put(c.key(tok), tok, p, now)
	}
	c.get(c.key(toks[0]), toks[0]) // recently used: survives the next eviction
	c.put(c.key(toks[3]), toks[3], p, now)
	c.put(c.key(toks[4]), toks[4], p, now)
	if c.len() != 3 {
		t.Fatalf("len = %d, want 3", c.len())
	}
	if _, ok := c.get(c.key(toks[0]), toks[0]); !ok {
		t.Fatal("recently used entry evicted")
	}
	c.remove(c.key(toks[0]), toks[0])
	if _, ok := c.get(c.key(toks[0]), toks[0]); ok || c.len() != 2 {
		t.Fatal("remove failed")
	}
	for _, tok := range toks[3:] {
		if _, ok := c.get(c.key(tok), tok); !ok {
			t.Fatalf("new entry %s missing", tok)
		}
	}
}

// Two tokens under one index key, as a maphash collision would put them,
// are told apart: each finds only its own principal.
func TestTokenCacheCollision(t *testing.T) {
	c := newTokenCache(4)
	now := time.Unix(100, 0)
	const key = 42
	tokA, tokB := strings.Repeat("a", 900), strings.Repeat("a", 899)+"b"
	pA, pB := &Principal{Subject: "a", ExpiresAt: now.Add(time.Hour)}, &Principal{Subject: "b", ExpiresAt: now.Add(time.Hour)}
	c.put(key, tokA, pA, now)
	if p, ok := c.get(key, tokB); ok {
		t.Fatalf("token B hit token A's entry: %v", p.Subject)
	}
	c.put(key, tokB, pB, now)
	if _, ok := c.get(key, tokA); ok {
		t.Fatal("token A still hits after B took the slot")
	}
	if p, ok := c.get(key, tokB); !ok || p != pB {
		t.Fatal("token B missed its own entry")
	}
	c.remove(key, tokA)
	if _, ok := c.get(key, tokB); !ok {
		t.Fatal("removing token A dropped token B's entry")
	}
}

// An entry planted under another token's index key, as a collision would
// leave it, never answers for that token: it is verified on its own.
func TestAuthenticateCollisionVerifies(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	tokA := mint(t, iss, devissuer.Claims{"sub": "alice"})
	tokB := mint(t, iss, devissuer.Claims{"sub": "bob"})
	pA := wantAuth(t, a, tokA, nil, ReasonNone)
	a.cache.put(a.cache.key(tokB), tokA, pA, clk.Now())
	if p := wantAuth(t, a, tokB, nil, ReasonNone); p.Subject != "bob" {
		t.Fatalf("subject = %q, want bob", p.Subject)
	}
}

// A cached token altered in one byte, anywhere, misses the cache and fails
// verification.
func TestTokenCacheTampered(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	tok := mint(t, iss, devissuer.Claims{"scope": "github:read"})
	wantAuth(t, a, tok, nil, ReasonNone)
	hdr, sig := strings.Index(tok, "."), strings.LastIndex(tok, ".")
	for name, at := range map[string]int{"header": hdr / 2, "payload": (hdr + sig) / 2, "signature": (sig + len(tok)) / 2} {
		t.Run(name, func(t *testing.T) {
			b := []byte(tok)
			b[at] = 'A'
			if tok[at] == 'A' {
				b[at] = 'B'
			}
			if _, err := a.Authenticate(context.Background(), string(b)); !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("tampered %s: err = %v, want ErrInvalidToken", name, err)
			}
		})
	}
	if _, err := a.Authenticate(context.Background(), tok+"A"); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("extended token: err = %v, want ErrInvalidToken", err)
	}
}

func TestTokenCacheConcurrent(t *testing.T) {
	c := newTokenCache(8)
	now := time.Unix(100, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				tok := fmt.Sprintf("token-%d", (g+i)%16)
				p := &Principal{Subject: tok, ExpiresAt: now.Add(time.Hour)}
				switch i % 3 {
				case 0:
					c.put(c.key(tok), tok, p, now)
				case 1:
					if got, ok := c.get(c.key(tok), tok); ok && got.Subject != tok {
						t.Errorf("%s got %s's principal", tok, got.Subject)
					}
				default:
					c.remove(c.key(tok), tok)
				}
			}
		})
	}
	wg.Wait()
	if n := c.len(); n > 8 {
		t.Fatalf("len = %d, over the bound", n)
	}
}

func TestTokensEqual(t *testing.T) {
	base := strings.Repeat("eyJhbGciOiJSUzI1NiJ9.", 50)
	for _, n := range []int{0, 1, 7, 8, 31, 32, 33, 64, 1000, len(base)} {
		a := base[:n]
		if !tokensEqual(a, strings.Clone(a)) {
			t.Fatalf("len %d: equal strings reported different", n)
		}
		for i := range n {
			b := []byte(a)
			b[i] ^= 1
			if tokensEqual(a, string(b)) {
				t.Fatalf("len %d: difference at byte %d not seen", n, i)
			}
		}
		if n > 0 && tokensEqual(a, a[:n-1]) {
			t.Fatalf("len %d: prefix reported equal", n)
		}
	}
}
