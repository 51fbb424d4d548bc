package authz

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestStreamsFollowTheIssuerAcrossAReload: a stream opened before a reload that changed its
// issuer's settings waited on the old configuration's key set, which nothing fetched any more,
// until that configuration retired: a key the issuer withdrew meanwhile did not end it. Once the
// new configuration serves (Replaces), the old streams follow the issuer's live key set: the
// new configuration's fetch that finds a key withdrawn ends the old streams of that key, and
// only those. An issuer the new configuration no longer has ends its old streams at once.
func TestStreamsFollowTheIssuerAcrossAReload(t *testing.T) {
	for _, fetchedFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("issuer changed, keys fetched before it serves %v", fetchedFirst), func(t *testing.T) {
			streamsFollowChangedIssuer(t, fetchedFirst)
		})
	}
	t.Run("issuer removed", func(t *testing.T) {
		clk := newClock()
		iss, other := startIssuer(t, clk), startIssuer(t, clk)
		old := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
		long := devissuer.Claims{"exp": clk.Now().Add(24 * time.Hour).Unix()}
		p := wantAuth(t, old, mint(t, iss, long), nil, ReasonNone)
		stream, end := old.UntilRefused(context.Background(), p)
		defer end()
		next, err := NewAuthenticator(Config{Issuers: []IssuerConfig{{Issuer: other.URL()}}},
			Options{ResourceURI: testResource, Now: clk.Now, Previous: old})
		if err != nil {
			t.Fatal(err)
		}
		defer next.Close()
		if stream.Err() != nil {
			t.Fatal("building a configuration ended a stream before it served")
		}
		next.Replaces(old)
		select {
		case <-stream.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("a stream of an issuer the configuration no longer trusts goes on")
		}
		if ctx, end := old.UntilRefused(context.Background(), p); ctx.Err() == nil {
			end()
			t.Fatal("the replaced configuration opened a stream for an issuer no longer trusted")
		} else {
			end()
		}
	})
}

// streamsFollowChangedIssuer is the changed-issuer case; fetchedFirst says the new configuration
// had its keys before it replaced the old one (as a reload has), or fetched them only after.
func streamsFollowChangedIssuer(t *testing.T, fetchedFirst bool) {
	clk := newClock()
	iss := startIssuer(t, clk)
	old := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	long := devissuer.Claims{"exp": clk.Now().Add(24 * time.Hour).Unix()}
	_, withdrawn := iss.Kids()
	pRS := wantAuth(t, old, mint(t, iss, long), nil, ReasonNone)
	esTok, err := iss.MintAlg(devissuer.ES256, long)
	if err != nil {
		t.Fatal(err)
	}
	pES := wantAuth(t, old, esTok, nil, ReasonNone)
	streamRS, endRS := old.UntilRefused(context.Background(), pRS)
	defer endRS()
	streamES, endES := old.UntilRefused(context.Background(), pES)
	defer endES()

	// The reload changes the issuer's settings: it gets a key set of its own.
	changed := Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}, ClockSkew: DefaultClockSkew + time.Second}
	next, err := NewAuthenticator(changed, Options{ResourceURI: testResource, Now: clk.Now, Previous: old})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if next.issuers[iss.URL()] == old.issuers[iss.URL()] {
		t.Fatal("the changed issuer was taken over: the test needs a new key set")
	}
	if fetchedFirst {
		if err := next.FetchKeys(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	next.Replaces(old)
	if err := next.FetchKeys(context.Background()); err != nil {
		t.Fatal(err)
	}
	if streamRS.Err() != nil || streamES.Err() != nil {
		t.Fatal("a reload whose key set has every key ended a stream")
	}

	// The issuer rotates: a new key signs, the old RS256 key is withdrawn.
	if _, err := iss.Rotate(devissuer.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := iss.Withdraw(withdrawn); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultJWKSMaxAge + time.Second)
	wantAuth(t, next, mint(t, iss, long), nil, ReasonNone) // the new set's fetch finds it gone
	select {
	case <-streamRS.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a stream opened before the reload goes on after its key was withdrawn")
	}
	if streamES.Err() != nil {
		t.Fatal("a stream of a key still published ended")
	}
	// An old request opening a stream now with the withdrawn key's token gets none that lasts.
	if ctx, end := old.UntilRefused(context.Background(), pRS); ctx.Err() == nil {
		end()
		t.Fatal("the replaced configuration opened a stream for a withdrawn key's token")
	} else {
		end()
	}
}

// TestReloadsKeepNoEndedKeySets: each reload that changes an issuer's settings hands the key
// sets of the configuration it replaces to the new one's (Replaces), so that their streams
// follow it. A set handed over kept its own list of the sets it had led before, so the newest
// set held, through it, every key set the issuer ever had: a replica reloaded every few
// minutes kept every configuration's keys, caches and fetch state for its whole life. Once the
// replaced configurations are closed, only live sets are reachable from the newest one.
func TestReloadsKeepNoEndedKeySets(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	const reloads = 20
	cur := reloadIssuer(t, iss, clk, reloads, func(*Authenticator) {})
	defer cur.Close()
	if n := reachableKeySets(cur.issuers[iss.URL()].keySets()); n > 2 {
		t.Errorf("after %d reloads the newest configuration reaches %d key sets of the issuer, want at most 2 (its own and the one it replaced)", reloads, n)
	}
}

// reloadIssuer reloads a configuration trusting iss reloads times, each time with the issuer's
// settings changed (the clock skew alternates), so that each reload gets a key set of its own:
// each new authenticator fetches its keys and replaces the one before, which is then closed, as
// a retired configuration is, and passed to replaced. It returns the last, serving.
func reloadIssuer(t *testing.T, iss *devissuer.Issuer, clk *mcptest.Clock, reloads int, replaced func(*Authenticator)) *Authenticator {
	t.Helper()
	cur := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}}, clk)
	if err := cur.FetchKeys(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range reloads {
		cfg := Config{Issuers: []IssuerConfig{{Issuer: iss.URL()}}, ClockSkew: DefaultClockSkew + time.Duration(i%2+1)*time.Second}
		next, err := NewAuthenticator(cfg, Options{ResourceURI: testResource, Now: clk.Now, Previous: cur})
		if err != nil {
			t.Fatal(err)
		}
		if err := next.FetchKeys(context.Background()); err != nil {
			t.Fatal(err)
		}
		next.Replaces(cur)
		cur.Close()
		replaced(cur)
		cur = next
	}
	return cur
}

// reachableKeySets counts the key sets reachable from sets through the sets each leads.
func reachableKeySets(sets []*keySet) int {
	seen := map[*keySet]bool{}
	for len(sets) > 0 {
		k := sets[0]
		sets = sets[1:]
		if seen[k] {
			continue
		}
		seen[k] = true
		k.mu.RLock()
		sets = append(sets, k.followers...)
		k.mu.RUnlock()
	}
	return len(seen)
}

// TestReplacedAuthenticatorsAreLetGo: a configuration replaced by a reload and closed is
// garbage once nothing serves with it. Each issuer's key-set constructor held the options its
// authenticator was built with, Previous among them, so every authenticator held the one it
// replaced, and the newest every one the process ever built, token cache and all: a replica
// grew at every reload that changed an issuer's settings. The test waits for the collector to
// find the replaced ones unreachable, with a deadline as a fail-safe.
func TestReplacedAuthenticatorsAreLetGo(t *testing.T) {
	clk := newClock()
	iss := startIssuer(t, clk)
	const reloads = 20
	var collected atomic.Int64
	cur := reloadIssuer(t, iss, clk, reloads, func(a *Authenticator) {
		runtime.AddCleanup(a, func(*atomic.Int64) { collected.Add(1) }, &collected)
	})
	defer cur.Close()
	// The last one replaced is still led by cur's key set until cur's next fetch prunes it.
	deadline := time.Now().Add(30 * time.Second)
	for collected.Load() < reloads-1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine, after the collection
	}
	if got := collected.Load(); got < reloads-1 {
		t.Errorf("%d of %d replaced and closed authenticators were collected, want at least %d", got, reloads, reloads-1)
	}
}
