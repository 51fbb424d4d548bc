package authz

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
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

// TestCachedTokensSurviveKeySetGlitches: a stale set's fetch that fails, returns garbage or an
// empty set, or hangs, ends no cached token, and a hit never waits for it.
func TestCachedTokensSurviveKeySetGlitches(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	var mode atomic.Value
	mode.Store("proxy")
	release := make(chan struct{})
	hanging := make(chan struct{}, 16)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load().(string) {
		case "502":
			http.Error(w, "down", http.StatusBadGateway)
		case "garbage":
			_, _ = io.WriteString(w, `{"keys": [{"kty": 7`)
		case "empty":
			_, _ = io.WriteString(w, `{"keys": []}`)
		case "hang":
			hanging <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		default:
			res, err := http.Get(iss.JWKSURL())
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer res.Body.Close()
			_, _ = io.Copy(w, res.Body)
		}
	}))
	t.Cleanup(jwks.Close)
	t.Cleanup(func() { close(release) })
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL(), JWKSURL: jwks.URL}}, FetchTimeout: time.Hour}, clk)
	tok := mint(t, iss, devissuer.Claims{"exp": clk.Now().Add(24 * time.Hour).Unix()})
	first := wantAuth(t, a, tok, nil, ReasonNone)
	ks := a.issuers[iss.URL()].keys
	for _, m := range []string{"502", "garbage", "empty"} {
		mode.Store(m)
		clk.Advance(DefaultJWKSMaxAge + DefaultJWKSMinRefreshInterval)
		wantAuth(t, a, tok, nil, ReasonNone) // starts the fetch
		_, _ = ks.refresh(t.Context())       // waits for a fetch in this mode to be taken in
		for ks.inFlight.Load() {             // and for the hit's fetch to be over
			runtime.Gosched()
		}
		if p := wantAuth(t, a, tok, nil, ReasonNone); p != first {
			t.Fatalf("%s: the cached token was verified again", m)
		}
	}
	mode.Store("hang")
	clk.Advance(DefaultJWKSMaxAge + DefaultJWKSMinRefreshInterval)
	done := make(chan error, 1)
	go func() { _, err := a.Authenticate(t.Context(), tok); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a hit while the key set hangs: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a hit waited for a key set that hangs")
	}
	select {
	case <-hanging: // the hit did start the fetch that still hangs
	case <-time.After(10 * time.Second):
		t.Fatal("a stale set was not fetched again")
	}
	// While that fetch hangs, further hits neither start nor join one: no allocation.
	ctx := context.Background()
	if n := testing.AllocsPerRun(50, func() { _, _ = a.Authenticate(ctx, tok) }); n != 0 {
		t.Fatalf("a hit on a stale set whose fetch hangs allocates %v times", n)
	}
}

// TestStreamsEndWhenAKeyLeaves: what a token opened that lasts ends once a fetch finds a key
// gone from the set that verified it, not only at the token's exp: a stream opened with a token
// of a withdrawn (say stolen) key must not run on until the exp its signer chose. A set that
// only gains a key ends nothing, and a token verified after the removal opens a stream anew.
func TestStreamsEndWhenAKeyLeaves(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	long := devissuer.Claims{"exp": clk.Now().Add(24 * time.Hour).Unix()}
	p := wantAuth(t, a, mint(t, iss, long), nil, ReasonNone)
	stream, end := a.UntilRefused(context.Background(), p)
	defer end()
	// A second stream of the key, opened once the first has made the key's context, ends too.
	second, endSecond := a.UntilRefused(context.Background(), p)
	defer endSecond()
	if _, err := iss.Rotate(devissuer.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultJWKSMaxAge + time.Second)
	wantAuth(t, a, mint(t, iss, long), nil, ReasonNone) // fetches the set with both keys
	if stream.Err() != nil {
		t.Fatal("a key set that only gained a key ended a stream")
	}
	if _, err := iss.Rotate(devissuer.RotateOptions{DropOld: true}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultJWKSMaxAge + time.Second)
	newTok := mint(t, iss, long)
	wantAuth(t, a, newTok, nil, ReasonNone) // the fetch that finds the old keys gone
	select {
	case <-stream.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the stream of a withdrawn key's token goes on")
	}
	select {
	case <-second.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the second stream of a withdrawn key's token goes on")
	}
	// Verified again (a hit after a removal verifies the token anew), it opens a stream anew.
	fresh := wantAuth(t, a, newTok, nil, ReasonNone)
	again, endAgain := a.UntilRefused(context.Background(), fresh)
	defer endAgain()
	if again.Err() != nil {
		t.Fatalf("a stream of a token verified after the removal ended at once: %v", again.Err())
	}
	// A token verified before a removal the stream has not yet seen opens none that lasts.
	if ctx, end := a.UntilRefused(context.Background(), p); ctx.Err() == nil {
		end()
		t.Fatal("a stream opened with a token verified before a removal did not end")
	} else {
		end()
	}
}

// TestKeyRotationEndsOnlyTheWithdrawnKeysStreams: an issuer rotates as issuers do (a new key is
// published and signs, the old one stays a while, then is withdrawn); the fetch that finds the
// old key gone ends the streams its tokens opened, and only those: the streams of the new key and
// of the issuer's other key go on, and open anew, while a token of the withdrawn key opens none
// that lasts. A stream whose token's key is not known ends at any removal (fail closed).
func TestKeyRotationEndsOnlyTheWithdrawnKeysStreams(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	long := devissuer.Claims{"exp": clk.Now().Add(24 * time.Hour).Unix()}
	_, oldKid := iss.Kids()
	pOld := wantAuth(t, a, mint(t, iss, long), nil, ReasonNone)
	esTok, err := iss.MintAlg(devissuer.ES256, long)
	if err != nil {
		t.Fatal(err)
	}
	pOther := wantAuth(t, a, esTok, nil, ReasonNone)
	if _, err := iss.Rotate(devissuer.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultJWKSMinRefreshInterval)
	newTok := mint(t, iss, long)
	pNew := wantAuth(t, a, newTok, nil, ReasonNone) // a kid the set lacks: fetches it with the new key
	unknown := *pNew
	unknown.keys.key = ""
	open := func(p *Principal) context.Context {
		ctx, end := a.UntilRefused(context.Background(), p)
		t.Cleanup(end)
		return ctx
	}
	oldStream, otherStream, newStream, unknownStream := open(pOld), open(pOther), open(pNew), open(&unknown)
	for name, ctx := range map[string]context.Context{"old": oldStream, "other": otherStream, "new": newStream, "unknown": unknownStream} {
		if ctx.Err() != nil {
			t.Fatalf("the %s key's stream ended before any key left: %v", name, ctx.Err())
		}
	}

	if err := iss.Withdraw(oldKid); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultJWKSMaxAge + time.Second)
	wantAuth(t, a, mint(t, iss, long), nil, ReasonNone) // a miss on a stale set: the fetch without the old key
	for name, ctx := range map[string]context.Context{"withdrawn key's": oldStream, "unknown key's": unknownStream} {
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("the %s stream goes on after the withdrawal", name)
		}
	}
	// The kept keys' streams wait on their keys' own contexts, which that fetch did not end (it
	// ends them under the set's lock, before it returns, so this reads its outcome).
	for name, p := range map[string]*Principal{"new": pNew, "other": pOther} {
		if err := p.keys.left().Err(); err != nil {
			t.Errorf("the %s key's streams were ended by another key's withdrawal", name)
		}
		if ctx, end := a.UntilRefused(context.Background(), p); ctx.Err() != nil {
			t.Errorf("a stream of the %s key, which stays published, does not open", name)
		} else {
			end()
		}
	}
	if newStream.Err() != nil || otherStream.Err() != nil {
		t.Fatalf("a kept key's stream ended: new %v, other %v", newStream.Err(), otherStream.Err())
	}
	if ctx, end := a.UntilRefused(context.Background(), pOld); ctx.Err() == nil {
		end()
		t.Fatal("a token of the withdrawn key opened a stream that lasts")
	} else {
		end()
	}
	wantAuth(t, a, mint(t, iss, long), nil, ReasonNone)
	if _, err := a.Authenticate(context.Background(), newTok); err != nil {
		t.Fatalf("the new key's token after the old key's withdrawal: %v", err)
	}
}

// TestStreamsEndWhenAKeyLeavesAfterAnEmptySet: a fetch that returns an empty set is a glitch
// and ends nothing, and the next set is compared with the last one that held keys, so a key
// withdrawn across the glitch still ends its streams and its cached tokens.
func TestStreamsEndWhenAKeyLeavesAfterAnEmptySet(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	var empty atomic.Bool
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if empty.Load() {
			_, _ = io.WriteString(w, `{"keys": []}`)
			return
		}
		res, err := http.Get(iss.JWKSURL())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		_, _ = io.Copy(w, res.Body)
	}))
	t.Cleanup(jwks.Close)
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL(), JWKSURL: jwks.URL}}}, clk)
	long := devissuer.Claims{"exp": clk.Now().Add(24 * time.Hour).Unix()}
	tok := mint(t, iss, long)
	p := wantAuth(t, a, tok, nil, ReasonNone)
	stream, end := a.UntilRefused(context.Background(), p)
	defer end()
	ks := a.issuers[iss.URL()].keys
	empty.Store(true)
	clk.Advance(DefaultJWKSMaxAge + DefaultJWKSMinRefreshInterval)
	if _, err := ks.refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := p.keys.left().Err(); err != nil || stream.Err() != nil {
		t.Fatal("an empty key set ended a stream")
	}
	if _, err := iss.Rotate(devissuer.RotateOptions{DropOld: true}); err != nil {
		t.Fatal(err)
	}
	empty.Store(false)
	clk.Advance(DefaultJWKSMaxAge + DefaultJWKSMinRefreshInterval)
	if _, err := ks.refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stream.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a key withdrawn across an empty set left its stream open")
	}
	wantAuth(t, a, tok, ErrInvalidToken, ReasonUnknownKey)
}
