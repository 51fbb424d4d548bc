package useroauth

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// TestRegistrationOncePerReplica: the first users of a dynamically registered backend arrive at
// once, ten on each of two replicas sharing Redis. The authorization server sees at most one
// registration per replica (not one per user: each would be an orphan client there), and every
// caller on both replicas ends up with the same client.
func TestRegistrationOncePerReplica(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{redis: true, registration: RegistrationDynamic, authServer: realop.AuthServerOptions{Registration: true}})
	other := newFixture(t, fixtureOptions{replicaOf: f, sharedURL: true, registration: RegistrationDynamic})
	slow := "slow"
	f.asLink.register.Store(&slow)
	var wg sync.WaitGroup
	ids := make(chan string, 20)
	for i := range 20 {
		svc := f.svc
		if i%2 == 1 {
			svc = other.svc
		}
		wg.Go(func() {
			_, c, err := svc.serverAndClient(t.Context(), svc.backends[backendName])
			if err != nil {
				t.Errorf("serverAndClient: %v", err)
			}
			ids <- c.ID
		})
	}
	wg.Wait()
	close(ids)
	if n := f.registrations.Load(); n < 1 || n > 2 {
		t.Errorf("%d registrations at the authorization server for 20 first users on 2 replicas, want 1 or 2", n)
	}
	var first string
	for id := range ids {
		if first == "" {
			first = id
		}
		if id == "" || id != first {
			t.Fatalf("callers got different clients: %q and %q", first, id)
		}
	}
	// A later first user of either replica registers nothing.
	before := f.registrations.Load()
	for _, svc := range []*Service{f.svc, other.svc} {
		if _, c, err := svc.serverAndClient(t.Context(), svc.backends[backendName]); err != nil || c.ID != first {
			t.Errorf("later caller: %q, %v; want %q", c.ID, err, first)
		}
	}
	if f.registrations.Load() != before {
		t.Error("a later caller registered again")
	}
}

// TestRegistrationCooldown: an authorization server that refuses or does not answer the
// registration is asked once per cooldown, however many callers need the client meanwhile;
// they get a retryable error saying when to try again (the connect page's Retry-After), the
// cooldown grows while the failures go on, and the first registration that succeeds ends it.
func TestRegistrationCooldown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{registration: RegistrationDynamic, authServer: realop.AuthServerOptions{Registration: true}})
	st := f.svc.backends[backendName]
	mode := func(m string) { f.asLink.register.Store(&m) }
	// try asks n callers at once and returns the error they share and the requests sent.
	try := func(n int) (*RetryError, int64) {
		t.Helper()
		before := f.asLink.registerSent.Load()
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				_, _, err := f.svc.serverAndClient(t.Context(), st)
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		var re *RetryError
		for err := range errs {
			var e *RetryError
			if !errors.As(err, &e) || !errors.Is(err, ErrAuthServer) {
				t.Fatalf("failing registration: %v; want a RetryError wrapping ErrAuthServer", err)
			}
			re = e
		}
		return re, f.asLink.registerSent.Load() - before
	}

	mode("hang")
	re, sent := try(10)
	if sent != 1 || re.After != registrationCooldown {
		t.Fatalf("hanging server, 10 callers: %d requests, retry after %s; want 1 and %s", sent, re.After, registrationCooldown)
	}
	mode("refuse")
	if re, sent = try(5); sent != 0 || re.After <= 0 || re.After > registrationCooldown {
		t.Fatalf("within the cooldown: %d requests, retry after %s; want none and at most %s", sent, re.After, registrationCooldown)
	}
	// The connect page is on screen for webpage.MinDwell before Continue: a second less to wait.
	if status, retry := startConnect(t, f); status != http.StatusServiceUnavailable || retry != "4" {
		t.Errorf("connect page within the cooldown: %d, Retry-After %q; want 503, 4", status, retry)
	}
	f.clock.Advance(registrationCooldown)
	if re, sent = try(5); sent != 1 || re.After != 2*registrationCooldown {
		t.Fatalf("after the cooldown, still refusing: %d requests, retry after %s; want 1 and %s", sent, re.After, 2*registrationCooldown)
	}
	f.clock.Advance(registrationCooldown)
	if _, sent = try(3); sent != 0 {
		t.Fatalf("within the grown cooldown: %d requests, want none", sent)
	}
	f.asLink.register.Store(nil)
	f.clock.Advance(registrationCooldown)
	before := f.asLink.registerSent.Load()
	for range 3 {
		if _, c, err := f.svc.serverAndClient(t.Context(), st); err != nil || c.ID == "" {
			t.Fatalf("server back: %q, %v", c.ID, err)
		}
	}
	if n := f.asLink.registerSent.Load() - before; n != 1 {
		t.Errorf("server back: %d registrations, want 1", n)
	}
	if strings.Contains(f.log.String(), asClientSecret) {
		t.Error("a secret in the logs")
	}
}

// startConnect opens a connect link as alice and continues; it returns the status and the
// Retry-After of the answer.
func startConnect(t *testing.T, f *fixture) (int, string) {
	t.Helper()
	b := f.browser(t)
	link := f.link(t, f.caller(realop.UserID))
	status, body := b.openLink(link, f.idp.Username())
	if status != http.StatusOK {
		t.Fatalf("connect page: %d\n%s", status, body)
	}
	f.clock.Advance(webpage.MinDwell) // the page on screen a while before Continue
	req, _ := http.NewRequest(http.MethodPost, link, strings.NewReader(url.Values{"csrf": {csrfOf(t, body)}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// TestRegistrationExpiredOnArrival: a registration answer whose client secret has already
// expired is a failed registration (cooldown, retryable error), not a client to use once and
// register again on every later use.
func TestRegistrationExpiredOnArrival(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{registration: RegistrationDynamic, authServer: realop.AuthServerOptions{Registration: true}})
	st := f.svc.backends[backendName]
	expired := "expired"
	f.asLink.register.Store(&expired)
	for range 3 {
		_, _, err := f.svc.serverAndClient(t.Context(), st)
		var re *RetryError
		if !errors.As(err, &re) || !errors.Is(err, ErrAuthServer) {
			t.Fatalf("registration expired on arrival: %v; want a RetryError", err)
		}
	}
	if n := f.asLink.registerSent.Load(); n != 1 {
		t.Errorf("%d registrations for 3 uses, want 1", n)
	}
}

// TestRegisteredClientForgotten: the authorization server drops the gateway's dynamically
// registered client (servers clean registrations up) and answers invalid_client. That refresh
// fails retryably; the client is forgotten (here and in the store), the next use registers a
// new one, and the record issued to the old client is dropped so the user connects again,
// instead of every refresh and connect failing until a restart.
func TestRegisteredClientForgotten(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{registration: RegistrationDynamic, authServer: realop.AuthServerOptions{Registration: true}})
	alice, _ := connected(t, f)
	e, err := f.svc.Vault().Get(t.Context(), alice, backendName)
	if err != nil {
		t.Fatal(err)
	}
	f.as.RemoveClient(e.ClientID)
	f.clock.Advance(24 * time.Hour)
	if _, ok, err := f.svc.Token(t.Context(), backendName, alice); ok || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("refresh with a client the server dropped: ok %v, %v; want ErrUnavailable", ok, err)
	}
	sent := f.asLink.registerSent.Load()
	f.noToken(t, alice) // registers anew; the old client's record goes
	if n := f.asLink.registerSent.Load() - sent; n != 1 {
		t.Errorf("%d registrations after the client was dropped, want 1", n)
	}
	_, c, err := f.svc.serverAndClient(t.Context(), f.svc.backends[backendName])
	if err != nil || c.ID == e.ClientID || c.ID == "" {
		t.Errorf("the gateway's client now: %q, %v; want a new one", c.ID, err)
	}
	expectContains(t, "the log", f.log.String(), "no longer knows the gateway's registered client")
}

// TestForgottenClientKeepsANewerRegistration: two replicas meet invalid_client for the same
// dropped client. The one that reads the stored registration second, after the first already
// registered anew and stored its new client, must not remove that new client: it removes the
// stored registration only while it is the dropped one. It used to remove whatever was there,
// so every replica registered yet again (an orphan client at the server per round) and the
// tokens issued meanwhile to the new client were dropped with it.
func TestForgottenClientKeepsANewerRegistration(t *testing.T) {
	t.Parallel()
	for _, redis := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "redis"}[redis], func(t *testing.T) {
			f := newFixture(t, fixtureOptions{redis: redis, registration: RegistrationDynamic, authServer: realop.AuthServerOptions{Registration: true}})
			other := newFixture(t, fixtureOptions{replicaOf: f, sharedURL: true, registration: RegistrationDynamic})
			ctx := t.Context()
			st, ost := f.svc.backends[backendName], other.svc.backends[backendName]
			d, dropped, err := f.svc.serverAndClient(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			od, c, err := other.svc.serverAndClient(ctx, ost)
			if err != nil || c.ID != dropped.ID {
				t.Fatalf("the other replica's client: %q, %v; want the stored %q", c.ID, err, dropped.ID)
			}
			f.as.RemoveClient(dropped.ID)
			var fresh client
			f.svc.oauth.beforeForget = func() {
				// The other replica met invalid_client first: it forgot the client and registered anew.
				other.svc.oauth.forgetClient(ctx, ost, od, dropped)
				if _, fresh, err = other.svc.serverAndClient(ctx, ost); err != nil || fresh.ID == dropped.ID {
					t.Errorf("the other replica's new client: %q, %v", fresh.ID, err)
				}
			}
			f.svc.oauth.forgetClient(ctx, st, d, dropped)
			f.svc.oauth.beforeForget = nil
			sent := f.asLink.registerSent.Load()
			for _, svc := range []*Service{f.svc, other.svc} {
				if _, c, err := svc.serverAndClient(ctx, svc.backends[backendName]); err != nil || c.ID != fresh.ID {
					t.Errorf("a replica's client after both forgot the dropped one: %q, %v; want the new %q", c.ID, err, fresh.ID)
				}
			}
			if n := f.asLink.registerSent.Load() - sent; n != 0 {
				t.Errorf("%d registrations after the new client was stored, want none", n)
			}
		})
	}
}

// TestUnreadableRegistrationIsReplacedOnce: a stored registration no replica can open (sealed
// with a key the operator has since rotated out, or damaged) is replaced by the first replica
// that registers anew, and only while it is still the one read; every other replica then
// uses that client. Kept, it blocked every replica's store of its new client (SetNX), so each
// replica registered a client of its own on every start, without end when the record has no
// expiry.
func TestUnreadableRegistrationIsReplacedOnce(t *testing.T) {
	t.Parallel()
	for _, redis := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "redis"}[redis], func(t *testing.T) {
			f := newFixture(t, fixtureOptions{redis: redis, registration: RegistrationDynamic, authServer: realop.AuthServerOptions{Registration: true}})
			ctx := t.Context()
			st := f.svc.backends[backendName]
			d, first, err := f.svc.serverAndClient(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			key := f.svc.oauth.registrationKey(st, d)
			if err := f.store.Set(ctx, key, []byte("sealed with a key no replica holds"), time.Hour); err != nil {
				t.Fatal(err)
			}
			sent := f.asLink.registerSent.Load()
			a := newFixture(t, fixtureOptions{replicaOf: f, sharedURL: true, registration: RegistrationDynamic})
			b := newFixture(t, fixtureOptions{replicaOf: f, sharedURL: true, registration: RegistrationDynamic})
			_, ca, err := a.svc.serverAndClient(ctx, a.svc.backends[backendName])
			if err != nil || ca.ID == first.ID {
				t.Fatalf("the first replica's client over an unreadable registration: %q, %v", ca.ID, err)
			}
			_, cb, err := b.svc.serverAndClient(ctx, b.svc.backends[backendName])
			if err != nil || cb.ID != ca.ID {
				t.Errorf("the second replica's client: %q, %v; want the first replica's %q", cb.ID, err, ca.ID)
			}
			if n := f.asLink.registerSent.Load() - sent; n != 1 {
				t.Errorf("%d registrations after the stored one became unreadable, want 1", n)
			}
			raw, ok, err := f.store.Get(ctx, key)
			if err != nil || !ok {
				t.Fatalf("the stored registration: %v, %v", ok, err)
			}
			if r, err := f.svc.oauth.openRegistered(raw); err != nil || r.ID != ca.ID {
				t.Errorf("the stored registration: %q, %v; want %q", r.ID, err, ca.ID)
			}
		})
	}
}
