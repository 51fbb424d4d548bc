package authz

import (
	"context"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// TestCacheForgetsRemovedKeys: a token verified with a key the issuer has since withdrawn from
// its key set (a compromised key is withdrawn just so) is refused once the gateway has fetched
// the set without it, cached or not: the cache must not keep a forged token alive until an exp
// its forger chose. A key added beside it changes nothing.
func TestCacheForgetsRemovedKeys(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	long := devissuer.Claims{"exp": clk.Now().Add(24 * time.Hour).Unix()}
	oldTok := mint(t, iss, long)
	first := wantAuth(t, a, oldTok, nil, ReasonNone)
	if again := wantAuth(t, a, oldTok, nil, ReasonNone); again != first {
		t.Fatal("the token was not served from the cache")
	}
	if _, err := iss.Rotate(devissuer.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultJWKSMaxAge + time.Second)
	newTok := mint(t, iss, long)
	wantAuth(t, a, newTok, nil, ReasonNone) // a miss: fetches the set with both keys
	if again := wantAuth(t, a, oldTok, nil, ReasonNone); again != first {
		t.Fatal("a key set that only gained a key dropped a cached token")
	}
	// The issuer withdraws every key but a new one; the next fetch of its set, made by a miss,
	// ends the cached entries of every token the old keys signed.
	if _, err := iss.Rotate(devissuer.RotateOptions{DropOld: true}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultJWKSMaxAge + time.Second)
	wantAuth(t, a, mint(t, iss, long), nil, ReasonNone)
	wantAuth(t, a, oldTok, ErrInvalidToken, ReasonUnknownKey)
	wantAuth(t, a, newTok, ErrInvalidToken, ReasonUnknownKey)
}

// TestCachedTokensAloneRefreshKeys: where every caller holds a cached token, nothing misses the
// cache, yet a set older than jwksMaxAge is still fetched again (by a hit, which does not wait
// for it), so a withdrawn key's tokens end within jwksMaxAge and the time of one fetch.
func TestCachedTokensAloneRefreshKeys(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	tok := mint(t, iss, devissuer.Claims{"exp": clk.Now().Add(24 * time.Hour).Unix()})
	wantAuth(t, a, tok, nil, ReasonNone)
	if _, err := iss.Rotate(devissuer.RotateOptions{DropOld: true}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultJWKSMaxAge - time.Second)
	wantAuth(t, a, tok, nil, ReasonNone) // the set is not stale yet: nothing is fetched
	clk.Advance(2 * time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		_, err := a.Authenticate(ctx, tok)
		if err != nil {
			if Reason(err) != ReasonUnknownKey {
				t.Fatalf("Authenticate = %v, want unknown_key", err)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("a token of a withdrawn key is still served from the cache")
		case <-time.After(5 * time.Millisecond): // the fetch a hit started is on its way
		}
	}
}
