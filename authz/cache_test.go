package authz

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

func TestTokenCacheBounded(t *testing.T) {
	c := newTokenCache(3, 3)
	now := time.Unix(100, 0)
	p := func(tok string) *Principal { return &Principal{Subject: tok, ExpiresAt: now.Add(time.Hour)} } // one caller each
	toks := []string{"t1", "t2", "t3", "t4", "t5"}
	for _, tok := range toks[:3] {
		c.put(c.key(tok), p(tok), now)
	}
	c.get(c.key(toks[0])) // recently used: survives the next eviction
	c.put(c.key(toks[3]), p(toks[3]), now)
	c.put(c.key(toks[4]), p(toks[4]), now)
	if c.len() != 3 {
		t.Fatalf("len = %d, want 3", c.len())
	}
	if _, ok := c.get(c.key(toks[0])); !ok {
		t.Fatal("recently used entry evicted")
	}
	c.remove(c.key(toks[0]))
	if _, ok := c.get(c.key(toks[0])); ok || c.len() != 2 {
		t.Fatal("remove failed")
	}
	for _, tok := range toks[3:] {
		if _, ok := c.get(c.key(tok)); !ok {
			t.Fatalf("new entry %s missing", tok)
		}
	}
}

// A cached token altered in one byte, anywhere, misses the cache and fails
// verification.
func TestTokenCacheTampered(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	// Issued before the key set is fetched: a header altered into an unknown kid is then
	// refused outright, not answered "retry later" as a kid newer than the set would be.
	tok := mint(t, iss, devissuer.Claims{"scope": "github:read", "iat": clk.Now().Add(-time.Hour).Unix()})
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
	c := newTokenCache(8, 8)
	now := time.Unix(100, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				tok := fmt.Sprintf("token-%d", (g+i)%16)
				p := &Principal{Subject: tok, ExpiresAt: now.Add(time.Hour)}
				switch i % 3 {
				case 0:
					c.put(c.key(tok), p, now)
				case 1:
					if got, ok := c.get(c.key(tok)); ok && got.Subject != tok {
						t.Errorf("%s got %s's principal", tok, got.Subject)
					}
				default:
					c.remove(c.key(tok))
				}
			}
		})
	}
	wg.Wait()
	if n := c.len(); n > 8 {
		t.Fatalf("len = %d, over the bound", n)
	}
}

// The cache keeps digests, never tokens (SECURITY.md): after real tokens
// were verified and cached, no entry holds their text, and each entry's key
// is its token's SHA-256.
func TestTokenCacheKeepsNoTokens(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	toks := []string{mint(t, iss, devissuer.Claims{"sub": "alice"}), mint(t, iss, devissuer.Claims{"sub": "bob"})}
	for _, tok := range toks {
		wantAuth(t, a, tok, nil, ReasonNone)
	}
	a.cache.mu.Lock()
	defer a.cache.mu.Unlock()
	if len(a.cache.ring) != len(toks) {
		t.Fatalf("%d entries cached, want %d", len(a.cache.ring), len(toks))
	}
	for i, tok := range toks {
		if _, ok := a.cache.index.Load(sha256.Sum256([]byte(tok))); !ok {
			t.Errorf("token %d is not indexed by its SHA-256", i)
		}
		for _, e := range a.cache.ring {
			if dump := fmt.Sprintf("%x %+v", e.key, *e.p); strings.Contains(dump, tok) || strings.Contains(dump, strings.Split(tok, ".")[2]) {
				t.Errorf("a cache entry holds token %d or its signature", i)
			}
		}
	}
}

// TestTokenCachePerCaller: one caller presenting many valid tokens, each verified against a real
// issuer, pushes out only its own cached tokens, never other callers'.
func TestTokenCachePerCaller(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}, TokenCacheSize: 8, TokenCachePerCaller: 3}, clk)
	others := []string{mint(t, iss, devissuer.Claims{"sub": "alice"}), mint(t, iss, devissuer.Claims{"sub": "bob"})}
	for _, tok := range others {
		wantAuth(t, a, tok, nil, ReasonNone)
	}
	for i := range 40 {
		wantAuth(t, a, mint(t, iss, devissuer.Claims{"sub": "mallory", "jti": fmt.Sprint("m", i)}), nil, ReasonNone)
	}
	for _, tok := range others {
		if _, ok := a.cache.get(a.cache.key(tok)); !ok {
			t.Fatal("another caller's tokens pushed a cached token out")
		}
	}
	if n := len(a.cache.callers[callerkey.Of(iss.URL(), "mallory")]); n != 3 {
		t.Fatalf("mallory holds %d cached tokens, want the bound of 3", n)
	}
	if n := a.cache.len(); n != 5 {
		t.Fatalf("len = %d, want 5", n)
	}
}

// TestTokenCacheInvariants: under random puts and removes by a few callers, the ring, the index
// and the callers' lists agree, and every bound holds.
func TestTokenCacheInvariants(t *testing.T) {
	const size, per = 6, 2
	c := newTokenCache(size, per)
	now := time.Unix(100, 0)
	r := rand.New(rand.NewPCG(3, 4))
	for step := range 5000 {
		tok := fmt.Sprint("t", r.IntN(20))
		owner := fmt.Sprint("u", r.IntN(5))
		if r.IntN(4) == 0 {
			c.remove(c.key(tok))
		} else {
			c.put(c.key(tok), &Principal{Subject: owner, ExpiresAt: now.Add(time.Duration(r.IntN(3)-1) * time.Hour)}, now)
		}
		c.mu.Lock()
		total := 0
		for o, own := range c.callers {
			if len(own) == 0 || len(own) > per {
				t.Fatalf("step %d: %v holds %d entries", step, o, len(own))
			}
			total += len(own)
		}
		if total != len(c.ring) || len(c.ring) > size {
			t.Fatalf("step %d: %d entries listed by caller, %d in the ring (bound %d)", step, total, len(c.ring), size)
		}
		for i, e := range c.ring {
			v, ok := c.index.Load(e.key)
			if e.slot != i || !ok || v.(*cacheEntry) != e || !slices.Contains(c.callers[e.owner], e) {
				t.Fatalf("step %d: slot %d disagrees with the index or its caller's list", step, i)
			}
		}
		c.mu.Unlock()
	}
}

// TestTokenCacheCallerFamily: each caller's bound on cached tokens is its own, for every
// spelling of an identity: subjects holding "#" (the caller key's separator), NUL, a
// NUL-separated lookalike of another caller, a very long subject, and one subject at two
// issuers. A caller's next token pushes out only that caller's oldest one.
func TestTokenCacheCallerFamily(t *testing.T) {
	long := strings.Repeat("s", 8<<10)
	callers := [][2]string{
		{"https://a.example", "alice"},
		{"https://b.example", "alice"},
		{"https://a.example", "#"},
		{"https://a.example", "a#b"},
		{"https://a.example", "a"},
		{"https://a.example", "a\x00b"},
		{"https://a.example", "a\x00"},
		{"https://a.example", "\x00"},
		{"https://a.example", long},
		{"https://a.example", long + "#"},
		{"https://a.example/realms/x", "y"},
		{"https://a.example/realms", "x#y"},
	}
	c := newTokenCache(len(callers)+1, 1)
	now := time.Unix(100, 0)
	p := func(i int) *Principal {
		return &Principal{Issuer: callers[i][0], Subject: callers[i][1], ExpiresAt: now.Add(time.Hour)}
	}
	for i := range callers {
		c.put(c.key(fmt.Sprint("tok", i)), p(i), now)
	}
	for i, who := range callers {
		if _, ok := c.get(c.key(fmt.Sprint("tok", i))); !ok {
			t.Errorf("caller %q at %q: its one token was pushed out by another caller's", who[1], who[0])
		}
	}
	if len(c.callers) != len(callers) {
		t.Errorf("%d callers in the cache, want %d: two identities share a bound", len(c.callers), len(callers))
	}
	c.put(c.key("tok0-again"), p(0), now)
	if _, ok := c.get(c.key("tok0")); ok {
		t.Error("a caller's second token past its bound of one kept its first")
	}
	for i := 1; i < len(callers); i++ {
		if _, ok := c.get(c.key(fmt.Sprint("tok", i))); !ok {
			t.Errorf("caller %d lost its token to caller 0's", i)
		}
	}
}
