package useroauth

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
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

// connectedPair connects alice as connected does, then bob (realop's other user).
func connectedPair(t *testing.T, f *fixture) (alice, bob vault.Caller) {
	t.Helper()
	alice, _ = connected(t, f)
	bob = f.caller(realop.OtherUserID)
	if status, body := f.browser(t).connect(f.link(t, bob), realop.OtherUsername, realop.OtherUsername); status != 200 {
		t.Fatalf("bob's connect: %d\n%s", status, body)
	}
	return alice, bob
}

// TestRefreshOncePerRecordAcrossReplicas: ten callers on each of two replicas sharing Redis
// need alice's expired token at once; the authorization server sees exactly one refresh, every
// caller gets the same new token, and the backend accepts it as alice's account.
func TestRefreshOncePerRecordAcrossReplicas(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice, _ := connected(t, f)
	f.clock.Advance(24 * time.Hour)

	f.asLink.hang.Store(true)
	_, ok, err := f.svc.Token(t.Context(), backendName, alice)
	f.asLink.hang.Store(false)
	if ok || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("authorization server hanging: ok %v, %v; want ErrUnavailable", ok, err)
	}
	f.clock.Advance(DefaultRefreshCooldown) // past the cooldown the hanging server began
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
	f.clock.Advance(2 * DefaultRefreshCooldown)
	f.noToken(t, alice)
	if _, err := f.svc.Vault().Get(t.Context(), alice, backendName); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("after invalid_grant the record is still there: %v", err)
	}
	if f.obs.count("refresh invalid_grant") != 1 || f.obs.count("refresh unavailable") != 2 {
		t.Errorf("refresh metrics: %v", f.obs.counts)
	}
}

// TestRefreshBacksOffWhileServerDown: once a refresh failed at the authorization server
// (no answer in time, garbage, HTTP 503), the replica sends it no refresh for a cooldown that
// doubles per failure in a row: a caller whose token expired is refused at once with the time
// left, one whose token still works goes on with it, and an answer of the server's own ends
// the cooldown.
func TestRefreshBacksOffWhileServerDown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice, _ := connected(t, f)
	f.clock.Advance(24 * time.Hour) // past the access token's expiry
	token := func(wantAsked int64) (string, bool, error) {
		t.Helper()
		before := f.asLink.tokenSent.Load()
		tok, ok, err := f.svc.Token(t.Context(), backendName, alice)
		if asked := f.asLink.tokenSent.Load() - before; asked != wantAsked {
			t.Fatalf("%d requests to the token endpoint, want %d", asked, wantAsked)
		}
		return tok, ok, err
	}
	refused := func(wantAsked int64, wantAfter time.Duration) {
		t.Helper()
		_, ok, err := token(wantAsked)
		if ok || !errors.Is(err, ErrUnavailable) || RetryAfter(err, 0) != wantAfter {
			t.Fatalf("ok %v, %v, retry after %s; want ErrUnavailable after %s", ok, err, RetryAfter(err, 0), wantAfter)
		}
	}

	f.asLink.overloaded.Store(true)
	refused(1, DefaultRefreshCooldown)
	refused(0, DefaultRefreshCooldown) // the clock stands still: the whole cooldown is left
	f.clock.Advance(DefaultRefreshCooldown / 2)
	refused(0, DefaultRefreshCooldown/2)
	f.clock.Advance(DefaultRefreshCooldown / 2)
	f.asLink.overloaded.Store(false)
	f.asLink.garbage.Store(true)
	refused(1, 2*DefaultRefreshCooldown) // the second failure in a row waits twice as long
	f.asLink.garbage.Store(false)
	f.clock.Advance(2 * DefaultRefreshCooldown)
	fresh, ok, err := token(1)
	if !ok || err != nil {
		t.Fatalf("the server back: ok %v, %v", ok, err)
	}

	// The cooldown ended with that answer; a token still in use outlives the next one.
	e, err := f.svc.Vault().Get(t.Context(), alice, backendName)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(e.Expiry.Add(-time.Second).Sub(f.clock.Now())) // due for refresh, not yet expired
	f.asLink.overloaded.Store(true)
	for _, asked := range []int64{1, 0, 0} {
		if tok, ok, err := token(asked); tok != fresh || !ok || err != nil {
			t.Fatalf("a token that still works during the cooldown: same %v, ok %v, %v", tok == fresh, ok, err)
		}
	}
	f.clock.Advance(2 * time.Second) // expired now, the cooldown not over: refused at once
	refused(0, DefaultRefreshCooldown-2*time.Second)
	if _, err := f.svc.Vault().Get(t.Context(), alice, backendName); err != nil {
		t.Fatalf("the record went with an unavailable server: %v", err)
	}
}

// TestRefreshCooldownEndsWhenAnotherReplicaRefreshed: a replica whose refresh failed learns
// from the shared record that another replica's refresh got an answer since, so its next
// failure starts a new run (the first wait again, not twice it).
func TestRefreshCooldownEndsWhenAnotherReplicaRefreshed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{redis: true})
	alice, _ := connected(t, f)
	other := newFixture(t, fixtureOptions{replicaOf: f})
	f.clock.Advance(24 * time.Hour)
	failOn := func(svc *Service, wantAfter time.Duration) {
		t.Helper()
		f.asLink.overloaded.Store(true)
		defer f.asLink.overloaded.Store(false)
		if _, ok, err := svc.Token(t.Context(), backendName, alice); ok || RetryAfter(err, 0) != wantAfter {
			t.Fatalf("ok %v, %v, retry after %s; want %s", ok, err, RetryAfter(err, 0), wantAfter)
		}
	}
	failOn(f.svc, DefaultRefreshCooldown)
	f.clock.Advance(time.Second)
	if _, ok, err := other.svc.Token(t.Context(), backendName, alice); !ok || err != nil {
		t.Fatalf("the other replica's refresh: ok %v, %v", ok, err)
	}
	f.clock.Advance(time.Second)
	if _, ok, err := f.svc.Token(t.Context(), backendName, alice); !ok || err != nil {
		t.Fatalf("the first replica reading the fresh record: ok %v, %v", ok, err)
	}
	f.clock.Advance(24 * time.Hour)
	failOn(f.svc, DefaultRefreshCooldown)
}

// TestBackendRefusesToken: a token the backend answers 401 to is never sent again. The first
// refusal makes the next call refresh it (the grant may stand while the backend dropped the
// token); a refusal of that refreshed token within refusedAgainWithin drops the record, so the
// next call asks for consent. A refusal of another token than the record's changes nothing,
// and a record without a refresh token goes at the first refusal.
func TestBackendRefusesToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice, tok := connected(t, f)
	key := alice.Issuer + "#" + alice.Subject
	f.svc.Rejected(t.Context(), backendName, key, "another token")
	if f.mustToken(t, alice) != tok {
		t.Fatal("refusing another token changed the record")
	}
	sent := f.asLink.tokenSent.Load()
	f.svc.Rejected(t.Context(), backendName, key, tok)
	fresh := f.mustToken(t, alice)
	if fresh == tok || f.asLink.tokenSent.Load() != sent+1 {
		t.Fatalf("after the first refusal: same token %v, %d refreshes; want a new token from one refresh",
			fresh == tok, f.asLink.tokenSent.Load()-sent)
	}
	if who, err := f.whoami(t, fresh); err != nil || who != "sub="+realop.OtherUserID {
		t.Errorf("the backend with the refreshed token: %q, %v", who, err)
	}
	f.clock.Advance(refusedAgainWithin - time.Second)
	f.svc.Rejected(t.Context(), backendName, key, fresh)
	f.noToken(t, alice)

	// Refused again only after refusedAgainWithin: refreshed again, not dropped.
	alice, tok = connected(t, f)
	f.svc.Rejected(t.Context(), backendName, key, tok)
	tok = f.mustToken(t, alice)
	f.clock.Advance(refusedAgainWithin)
	f.svc.Rejected(t.Context(), backendName, key, tok)
	if again := f.mustToken(t, alice); again == tok {
		t.Fatal("a refusal long after the last one did not refresh the token")
	}

	// Without a refresh token there is nothing to refresh: the record goes.
	e, err := f.svc.Vault().Get(t.Context(), alice, backendName)
	if err != nil {
		t.Fatal(err)
	}
	bare := e.Token
	bare.RefreshToken = ""
	if ok, err := f.svc.Vault().Swap(t.Context(), e, &bare); err != nil || !ok {
		t.Fatalf("dropping the refresh token: %v, %v", ok, err)
	}
	f.svc.Rejected(t.Context(), backendName, key, bare.AccessToken)
	f.noToken(t, alice)
}

// TestRefreshStoreDownMidway: the store stops while the authorization server answers a
// refresh, which rotates the refresh token. The call fails retryably; once the store is back,
// the replica that refreshed stores the result, and a call on the other replica gets the new
// token without a second refresh (which, with the rotated-away token, would have been refused
// and the user asked to connect again).
func TestRefreshStoreDownMidway(t *testing.T) {
	t.Parallel()
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

// TestRefreshLockOutlastsRefresh: with a backend timeout of 20 s a refresh may run 40 s (its
// discovery, then its token request). While one replica's token request is still at the
// authorization server, past the 30 s the refresh lock used to last, the other replica must not
// take the lock and send the same refresh token again (a server rotating refresh tokens takes
// the second use for a replay): it waits, and both get the one refresh's token.
func TestRefreshLockOutlastsRefresh(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{timeout: 20 * time.Second})
	alice, old := connected(t, f)
	other := newFixture(t, fixtureOptions{replicaOf: f, timeout: 20 * time.Second})
	f.clock.Advance(24 * time.Hour)
	entered, hold := make(chan struct{}), make(chan struct{})
	var once sync.Once
	held := func() { once.Do(func() { close(entered); <-hold }) }
	f.onTokenRequest.Store(&held)
	before := f.tokenRequests.Load()
	got := make(chan string, 2)
	fetch := func(svc *Service) {
		tok, ok, err := svc.Token(t.Context(), backendName, alice)
		if err != nil || !ok {
			t.Errorf("Token: ok %v, %v", ok, err)
		}
		got <- tok
	}
	go fetch(f.svc)
	<-entered
	f.clock.Advance(35 * time.Second) // the store's clock: past 30 s, within the refresh's 40 s
	go fetch(other.svc)
	// The other replica's second refresh, if it sends one, arrives within this bound.
	deadline := time.Now().Add(time.Second)
	for f.tokenRequests.Load()-before < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(hold)
	a, b := <-got, <-got
	if n := f.tokenRequests.Load() - before; n != 1 {
		t.Errorf("%d refresh requests at the authorization server, want 1", n)
	}
	if a != b || a == old || a == "" {
		t.Error("the replicas got different or stale tokens")
	}
}

// TestLockTTLCoversTheRefresh: every timeout a backend may have leaves the refresh lock longer
// than the refresh and the time to store its result; a longer timeout is refused.
func TestLockTTLCoversTheRefresh(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{0, time.Second, 10 * time.Second, 15 * time.Second, MaxTimeout} {
		b := Backend{Timeout: d}
		if b.lockTTL() < 2*b.timeout()+storeWindow {
			t.Errorf("timeout %s: lock ttl %s, want at least %s", d, b.lockTTL(), 2*b.timeout()+storeWindow)
		}
	}
	b := Backend{Name: "x", ClientID: "c", Timeout: MaxTimeout + time.Second}
	if errs := b.Problems(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "timeout") {
		t.Errorf("timeout above %s: %v", MaxTimeout, errs)
	}
}

// TestInvalidGrantAfterAnotherRefresh: a refresh that read the record before another replica
// refreshed it sends the refresh token that refresh rotated away, and the server answers
// invalid_grant. The newer record is the caller's connection: it is kept and used, and the
// caller is not sent to connect again.
func TestInvalidGrantAfterAnotherRefresh(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice, _ := connected(t, f)
	stale, err := f.svc.Vault().Get(t.Context(), alice, backendName)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(24 * time.Hour)
	fresh := f.mustToken(t, alice) // another refresh, which rotates the refresh token
	e, err := f.svc.refreshNow(t.Context(), f.svc.backends[backendName], alice, stale)
	if f.obs.count("refresh invalid_grant") != 1 {
		t.Fatalf("the stale refresh token was not refused (metrics %v): the server does not rotate, the test proves nothing", f.obs.counts)
	}
	if err != nil || e == nil || e.AccessToken != fresh {
		t.Errorf("refresh with the rotated-away token: %v, %v; want the newer record", e, err)
	}
	if got := f.mustToken(t, alice); got != fresh {
		t.Error("the newer record went")
	}
}

// TestRefreshKeepsThroughRecordChanges: while a refresh is at the server, the record it
// replaces changes, on another replica sharing Redis, without changing its tokens: the backend
// refuses the old access token on another call (Rejected marks the record), or a call seals it
// again under the newest key. The refreshed tokens are still the caller's connection: stored, not revoked,
// whereas the server has rotated the refresh token the record holds, so losing them loses the
// grant at the next refresh.
func TestRefreshKeepsThroughRecordChanges(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(f *fixture, who vault.Caller, old string){
		"the backend refuses the old token": func(f *fixture, who vault.Caller, old string) {
			f.svc.Rejected(context.Background(), backendName, who.Issuer+"#"+who.Subject, old)
		},
		"sealed again": func(f *fixture, who vault.Caller, _ string) {
			e, err := f.svc.Vault().Get(context.Background(), who, backendName)
			if err != nil {
				t.Error(err)
				return
			}
			if ok, err := f.svc.Vault().Swap(context.Background(), e, &e.Token); !ok || err != nil {
				t.Errorf("sealing again: %v, %v", ok, err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{redis: true})
			alice, old := connected(t, f)
			other := newFixture(t, fixtureOptions{replicaOf: f}) // where the record changes
			before, err := f.svc.Vault().Get(t.Context(), alice, backendName)
			if err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			hook := func() { once.Do(func() { change(other, alice, old) }) }
			f.asLink.beforeRefresh.Store(&hook)
			f.clock.Advance(24 * time.Hour) // the access token expired: the next call refreshes it
			fresh := f.mustToken(t, alice)
			f.asLink.beforeRefresh.Store(nil)
			e, err := f.svc.Vault().Get(t.Context(), alice, backendName)
			switch {
			case err != nil:
				t.Fatal(err)
			case fresh == old || e.AccessToken != fresh || e.RefreshToken == before.RefreshToken:
				t.Fatalf("after the refresh: token changed %v, record holds it %v, refresh token rotated %v; want the refreshed tokens kept",
					fresh != old, e.AccessToken == fresh, e.RefreshToken != before.RefreshToken)
			case f.asLink.revoked(fresh) || f.asLink.revoked(e.RefreshToken):
				t.Fatal("the refreshed tokens were revoked")
			}
			// The grant lives on: the next refresh is answered.
			f.clock.Advance(24 * time.Hour)
			if again := f.mustToken(t, alice); again == fresh {
				t.Error("the next refresh kept the token")
			}
		})
	}
}

// TestRefusedRefreshEndsAChangedRecord: a refresh the server refuses for good (invalid_grant)
// ends the grant also when the record changed meanwhile without changing its tokens (the
// backend refused the old access token on another call, on another replica sharing Redis): the
// record holding the refused refresh token goes and the call asks for consent, instead of
// getting the old access token, which the server and the backend both refuse.
func TestRefusedRefreshEndsAChangedRecord(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{redis: true})
	alice, old := connected(t, f)
	other := newFixture(t, fixtureOptions{replicaOf: f}) // where the backend refuses the old token
	var once sync.Once
	hook := func() {
		once.Do(func() { other.svc.Rejected(context.Background(), backendName, alice.Issuer+"#"+alice.Subject, old) })
	}
	f.asLink.beforeRefresh.Store(&hook)
	f.asLink.answer.Store(&tokenAnswer{http.StatusBadRequest, `{"error":"invalid_grant"}`})
	f.clock.Advance(24 * time.Hour)
	tok, ok, err := f.svc.Token(t.Context(), backendName, alice)
	f.asLink.answer.Store(nil)
	f.asLink.beforeRefresh.Store(nil)
	if ok || err != nil {
		t.Errorf("Token: the old one %v, ok %v, %v; want none (consent)", tok == old, ok, err)
	}
	if _, err := f.svc.Vault().Get(t.Context(), alice, backendName); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("the record: %v, want it removed", err)
	}
}

// TestRefreshTooLargeToKeep: a refresh whose answer does not fit a record (the server's new
// access token is larger than maxRecordBytes allows) is not the store being away: no retry can
// store it. The call is not failed as retryable forever with the refresh lock held; the record
// goes, the fresh tokens are revoked, the log says why, and the next call asks for consent.
func TestRefreshTooLargeToKeep(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice, _ := connected(t, f)
	f.clock.Advance(24 * time.Hour)
	f.asLink.bloat.Store(14 << 10) // with the refresh token and the rest, past 16 KiB sealed
	revocations := f.revocations.Load()
	if tok, ok, err := f.svc.Token(t.Context(), backendName, alice); ok || err != nil {
		t.Fatalf("refresh too large to keep: %d-byte token, ok %v, %v; want none, no error", len(tok), ok, err)
	}
	f.asLink.bloat.Store(0)
	if _, err := f.svc.Vault().Get(t.Context(), alice, backendName); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("the record is still there: %v", err)
	}
	if f.revocations.Load() == revocations {
		t.Error("the fresh tokens were not revoked")
	}
	expectContains(t, "the log", f.log.String(), "maxRecordBytes")
}

// TestCooldownFiguresAsDocumented: docs/user-oauth.md gives the refresh cooldown as 5 s,
// doubled per failure in a row, at most 5 minutes, and a second refusal within 10 minutes as
// the one that drops a record; the figures the code uses are those, the cap included.
func TestCooldownFiguresAsDocumented(t *testing.T) {
	t.Parallel()
	if DefaultRefreshCooldown != 5*time.Second || MaxRefreshCooldown != 5*time.Minute || refusedAgainWithin != 10*time.Minute {
		t.Fatalf("cooldown %s, cap %s, refused again within %s; docs/user-oauth.md says 5s, 5m0s, 10m0s",
			DefaultRefreshCooldown, MaxRefreshCooldown, refusedAgainWithin)
	}
	var c cooldown
	now := time.Unix(1e9, 0)
	var waits []time.Duration
	for range 10 {
		waits = append(waits, RetryAfter(c.failed(now, errors.New("down"), DefaultRefreshCooldown, MaxRefreshCooldown), 0))
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 5 * time.Minute, 5 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
}

// TestOneCallerCannotCoolRefreshForAll: the authorization server failing one caller's refresh
// with a status (HTTP 503 temporarily_unavailable to that grant only, as a server limiting one
// user's refreshes does) begins that caller's own cooldown: its next call is refused at once,
// while another caller's refresh is still sent and succeeds. Refreshes of two callers failing in
// a row begin the backend's cooldown, as one server failing for everyone does.
func TestOneCallerCannotCoolRefreshForAll(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice, bob := connectedPair(t, f)
	f.mustToken(t, bob)
	f.clock.Advance(24 * time.Hour) // past both access tokens' expiry
	e, err := f.svc.Vault().Get(t.Context(), alice, backendName)
	if err != nil {
		t.Fatal(err)
	}
	f.asLink.overloadedGrant.Store(&e.RefreshToken)
	token := func(who vault.Caller, wantAsked int64) (bool, error) {
		t.Helper()
		before := f.asLink.tokenSent.Load()
		_, ok, err := f.svc.Token(t.Context(), backendName, who)
		if asked := f.asLink.tokenSent.Load() - before; asked != wantAsked {
			t.Fatalf("%d requests to the token endpoint, want %d", asked, wantAsked)
		}
		return ok, err
	}
	if ok, err := token(alice, 1); ok || RetryAfter(err, 0) != DefaultRefreshCooldown {
		t.Fatalf("alice's refused refresh: ok %v, %v", ok, err)
	}
	if ok, err := token(alice, 0); ok || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("alice in her cooldown: ok %v, %v; want refused at once", ok, err)
	}
	if ok, err := token(bob, 1); !ok || err != nil {
		t.Fatalf("bob's refresh after alice's failed: ok %v, %v", ok, err)
	}
	// Now the server fails every refresh: alice's and then bob's, two callers in a row.
	f.asLink.overloadedGrant.Store(nil)
	f.asLink.overloaded.Store(true)
	f.clock.Advance(24 * time.Hour)
	if ok, _ := token(alice, 1); ok {
		t.Fatal("alice's refresh succeeded against an overloaded server")
	}
	if ok, _ := token(bob, 1); ok {
		t.Fatal("bob's refresh succeeded against an overloaded server")
	}
	if err := f.svc.backends[backendName].refreshCoolingDown(f.clock.Now(), vault.Caller{Issuer: "x", Subject: "anyone"}); err == nil {
		t.Fatal("two callers' failed refreshes in a row did not begin the backend's cooldown")
	}
}

// TestCallerCooldownsBounded: the callers' own refresh cooldowns a replica keeps for a backend
// are at most maxCallerCooldowns (1,024, as docs/user-oauth.md and docs/limits.md say), however
// many callers' refreshes the server fails with a status; the one whose wait ends first makes
// room, and the newest caller's cooldown is kept.
func TestCallerCooldownsBounded(t *testing.T) {
	t.Parallel()
	if maxCallerCooldowns != 1024 {
		t.Fatalf("maxCallerCooldowns %d; the documents say 1,024", maxCallerCooldowns)
	}
	st := &backendState{}
	now := time.Unix(1e9, 0)
	perUser := &oauthError{Status: 503, Code: "temporarily_unavailable"}
	who := func(i int) vault.Caller { return vault.Caller{Issuer: "https://idp.example", Subject: strconv.Itoa(i)} }
	for i := range maxCallerCooldowns + 100 {
		now = now.Add(time.Millisecond)
		_ = st.refreshAnswered(now, who(i), perUser, DefaultRefreshCooldown)
		if n := len(st.callerCool); n > maxCallerCooldowns {
			t.Fatalf("%d callers' cooldowns kept after %d callers, bound %d", n, i+1, maxCallerCooldowns)
		}
	}
	if _, ok := st.callerCool[who(0)]; ok {
		t.Error("the cooldown that ends first was kept")
	}
	if c, ok := st.callerCool[who(maxCallerCooldowns+99)]; !ok || c.active(now) == nil {
		t.Error("the newest caller's cooldown was not kept")
	}
}

// TestRemovedRecordsAreRevoked: a record the gateway removes on its own, without a server's
// refusal of its grant, holds tokens the server still takes: the backend refusing the caller's
// token again soon after a refresh, or the backend's resource changing in the configuration.
// They are revoked at the server that issued them (best effort), not left valid with nobody
// holding them.
func TestRemovedRecordsAreRevoked(t *testing.T) {
	t.Parallel()
	t.Run("refused again by the backend", func(t *testing.T) {
		f := newFixture(t, fixtureOptions{})
		alice, tok := connected(t, f)
		key := alice.Issuer + "#" + alice.Subject
		f.svc.Rejected(t.Context(), backendName, key, tok)
		fresh := f.mustToken(t, alice) // refreshed once
		e, err := f.svc.Vault().Get(t.Context(), alice, backendName)
		if err != nil {
			t.Fatal(err)
		}
		f.svc.Rejected(t.Context(), backendName, key, fresh) // again, soon: the record goes
		f.noToken(t, alice)
		if !f.asLink.revoked(e.RefreshToken) {
			t.Error("the removed record's refresh token was not revoked")
		}
	})
	t.Run("the backend's resource changed", func(t *testing.T) {
		f := newFixture(t, fixtureOptions{})
		alice, _ := connected(t, f)
		e, err := f.svc.Vault().Get(t.Context(), alice, backendName)
		if err != nil {
			t.Fatal(err)
		}
		moved := *e
		moved.Resource = "https://elsewhere.example/mcp"
		if ok, err := f.svc.Vault().Swap(t.Context(), e, &moved.Token); !ok || err != nil {
			t.Fatalf("moving the record: %v, %v", ok, err)
		}
		f.noToken(t, alice)
		if !f.asLink.revoked(e.RefreshToken) {
			t.Error("the removed record's refresh token was not revoked")
		}
	})
}
