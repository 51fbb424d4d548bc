package useroauth

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// connected connects alice's account (the authorization server's second user) through the
// first fixture's pages and returns her caller and token.
func connected(t *testing.T, f *fixture) (vault.Caller, string) {
	t.Helper()
	alice := f.caller(realop.UserID)
	if status, body := f.browser(t).connect(f.link(t, alice), f.idp.Username(), realop.OtherUsername); status != 200 {
		t.Fatalf("connect: %d\n%s", status, body)
	}
	return alice, f.mustToken(t, alice)
}

// TestRefreshOncePerRecordAcrossReplicas: ten callers on each of two replicas sharing Redis
// need alice's expired token at once; the authorization server sees exactly one refresh, every
// caller gets the same new token, and the backend accepts it as alice's account.
func TestRefreshOncePerRecordAcrossReplicas(t *testing.T) {
	f := newFixture(t, fixtureOptions{redis: true})
	alice, old := connected(t, f)
	other := newFixture(t, fixtureOptions{replicaOf: f})
	f.clock.Advance(24 * time.Hour) // past the access token's expiry
	before := f.tokenRequests.Load()
	var wg sync.WaitGroup
	got := make(chan string, 20)
	for i := range 20 {
		svc := f.svc
		if i%2 == 1 {
			svc = other.svc
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, ok, err := svc.Token(t.Context(), backendName, alice)
			if err != nil || !ok {
				t.Errorf("Token: ok %v, %v", ok, err)
			}
			got <- tok
		}()
	}
	wg.Wait()
	close(got)
	var fresh string
	for tok := range got {
		if fresh == "" {
			fresh = tok
		}
		if tok != fresh || tok == old {
			t.Fatalf("callers got different or stale tokens")
		}
	}
	if n := f.tokenRequests.Load() - before; n != 1 {
		t.Errorf("%d refresh requests at the authorization server, want 1", n)
	}
	if who, err := f.whoami(t, fresh); err != nil || who != "sub="+realop.OtherUserID {
		t.Errorf("the backend with the refreshed token: %q, %v", who, err)
	}
	if f.obs.count("refresh ok")+other.obs.count("refresh ok") != 1 {
		t.Errorf("refresh metrics: %v %v", f.obs.counts, other.obs.counts)
	}
}

// TestRefreshFailures: an authorization server that is down gives a retryable error and keeps
// the record; one that refuses the refresh token (the user's session there ended) removes it,
// so the next call asks for consent again.
func TestRefreshFailures(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice, _ := connected(t, f)
	f.clock.Advance(24 * time.Hour)

	f.asLink.hang.Store(true)
	_, ok, err := f.svc.Token(t.Context(), backendName, alice)
	f.asLink.hang.Store(false)
	if ok || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("authorization server hanging: ok %v, %v; want ErrUnavailable", ok, err)
	}
	f.asLink.garbage.Store(true)
	_, ok, err = f.svc.Token(t.Context(), backendName, alice)
	f.asLink.garbage.Store(false)
	if ok || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("authorization server answering garbage: ok %v, %v; want ErrUnavailable", ok, err)
	}
	if _, err := f.svc.Vault().Get(t.Context(), alice, backendName); err != nil {
		t.Fatalf("the record went with an unavailable server: %v", err)
	}

	if err := f.as.EndSessions(t.Context(), realop.OtherUserID, asClientID); err != nil {
		t.Fatal(err)
	}
	f.noToken(t, alice)
	if _, err := f.svc.Vault().Get(t.Context(), alice, backendName); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("after invalid_grant the record is still there: %v", err)
	}
	if f.obs.count("refresh invalid_grant") != 1 || f.obs.count("refresh unavailable") != 2 {
		t.Errorf("refresh metrics: %v", f.obs.counts)
	}
}

// TestBackendRefusesToken: a token the backend answers 401 to is dropped, so the next call asks
// for consent instead of sending it again; a token refreshed meanwhile is kept.
func TestBackendRefusesToken(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	alice, tok := connected(t, f)
	key := alice.Issuer + "#" + alice.Subject
	f.svc.Rejected(t.Context(), backendName, key, "another token")
	if f.mustToken(t, alice) != tok {
		t.Fatal("refusing another token changed the record")
	}
	f.svc.Rejected(t.Context(), backendName, key, tok)
	f.noToken(t, alice)
}

// TestRefreshStoreDownMidway: the store stops while the authorization server answers a
// refresh, which rotates the refresh token. The call fails retryably; once the store is back,
// the replica that refreshed stores the result, and a call on the other replica gets the new
// token without a second refresh (which, with the rotated-away token, would have been refused
// and the user asked to connect again).
func TestRefreshStoreDownMidway(t *testing.T) {
	f := newFixture(t, fixtureOptions{redis: true})
	alice, old := connected(t, f)
	other := newFixture(t, fixtureOptions{replicaOf: f})
	f.clock.Advance(24 * time.Hour)
	pause := func() {
		f.onTokenRequest.Store(nil)
		f.redis.Pause()
	}
	f.onTokenRequest.Store(&pause)
	before := f.tokenRequests.Load()
	if _, ok, err := f.svc.Token(t.Context(), backendName, alice); ok || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("store paused during the refresh: ok %v, %v; want ErrUnavailable", ok, err)
	}
	f.redis.Resume()
	fresh := other.mustToken(t, alice)
	if fresh == old {
		t.Fatal("the other replica got the expired token")
	}
	if n := f.tokenRequests.Load() - before; n != 1 {
		t.Errorf("%d refresh requests at the authorization server, want 1", n)
	}
	if who, err := f.whoami(t, fresh); err != nil || who != "sub="+realop.OtherUserID {
		t.Errorf("the backend with the stored token: %q, %v", who, err)
	}
	if got := f.mustToken(t, alice); got != fresh {
		t.Error("the replicas disagree on the token")
	}
}
