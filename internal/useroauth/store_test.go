package useroauth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// TestCallbackStoreDown: Redis goes away while the authorization server issues the tokens of a
// callback: the page says nothing was stored and to retry, the tokens just issued are revoked at
// the server, and once Redis is back nothing half-stored is there: the user simply connects
// again.
func TestCallbackStoreDown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{redis: true})
	alice := f.caller(realop.UserID)
	b := f.browser(t)
	u := held(t, f, b, f.idp.Username(), realop.OtherUsername, f.link(t, alice))
	pause := func() { f.redis.Pause() }
	f.onTokenRequest.Store(&pause)
	before := f.revocations.Load()
	status, _, body := b.get(u.String())
	f.onTokenRequest.Store(nil)
	f.redis.Resume()
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "Nothing was stored") {
		t.Fatalf("callback with the store down: %d\n%s", status, body)
	}
	if f.revocations.Load() == before {
		t.Error("the tokens issued for a record that could not be stored were not revoked")
	}
	if f.obs.count("consent failed "+FailStore) != 1 {
		t.Errorf("consent metrics: %v", f.obs.counts)
	}
	f.noToken(t, alice)
	if status, body := f.browser(t).connect(f.link(t, alice), f.idp.Username(), realop.OtherUsername); status != http.StatusOK {
		t.Fatalf("connecting again: %d\n%s", status, body)
	}
	f.mustToken(t, alice)
}

// TestRegistrations: the gateway is a client of the authorization server by a Client ID
// Metadata Document it serves, and by dynamic registration (RFC 7591); either way the backend
// accepts the token as the connected account.
func TestRegistrations(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		reg  Registration
		opts realop.AuthServerOptions
	}{
		{RegistrationMetadataDocument, realop.AuthServerOptions{MetadataDocuments: true, ISSResponse: true}},
		{RegistrationDynamic, realop.AuthServerOptions{Registration: true}},
	} {
		t.Run(string(tt.reg), func(t *testing.T) {
			f := newFixture(t, fixtureOptions{registration: tt.reg, authServer: tt.opts})
			f.as.SetDocumentClient(f.srv.Client())
			alice, tok := connected(t, f)
			if who, err := f.whoami(t, tok); err != nil || who != "sub="+realop.OtherUserID {
				t.Fatalf("the backend with the token: %q, %v", who, err)
			}
			e, err := f.svc.Vault().Get(t.Context(), alice, backendName)
			if err != nil {
				t.Fatal(err)
			}
			if tt.reg == RegistrationMetadataDocument && e.ClientID != f.srv.URL+"/connect/client-metadata/"+backendName+".json" {
				t.Errorf("client id %q, want the metadata document's URL", e.ClientID)
			}
			if tt.reg == RegistrationDynamic && (e.ClientID == "" || e.ClientID == asClientID) {
				t.Errorf("client id %q, want a registered one", e.ClientID)
			}
		})
	}
}

// TestRevokeBackend: the operator's revocation of a backend removes every caller's record and
// revokes their tokens at the authorization server; the other callers' calls then ask for
// consent again.
func TestRevokeBackend(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice, bob := connectedPair(t, f)
	before := f.revocations.Load()
	n, err := f.svc.RevokeBackend(t.Context(), backendName)
	if err != nil || n != 2 {
		t.Fatalf("RevokeBackend: %d, %v; want 2", n, err)
	}
	if f.revocations.Load()-before != 4 {
		t.Errorf("%d revocation requests, want 4 (two tokens each)", f.revocations.Load()-before)
	}
	f.noToken(t, alice)
	f.noToken(t, bob)
	if _, err := f.svc.RevokeBackend(t.Context(), "nope"); err != ErrUnknownBackend {
		t.Errorf("unknown backend: %v", err)
	}
	expectContains(t, "the audit log", f.log.String(), "useroauth: backend revoked", "records=2")
}

// TestRevokeBackendServerDown: an operator's revocation of a backend removes every record even
// when the authorization server does not answer, and waits for that server once, not once per
// record: with thousands of users a Timeout each would hold the operator's request for hours.
// The records not revoked at the server are counted in a log line.
func TestRevokeBackendServerDown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice, bob := connectedPair(t, f)
	f.asLink.hangRevoke.Store(true)
	before := f.asLink.revokeSent.Load()
	n, err := f.svc.RevokeBackend(context.Background(), backendName)
	if err != nil || n != 2 {
		t.Fatalf("RevokeBackend: %d, %v; want 2", n, err)
	}
	if sent := f.asLink.revokeSent.Load() - before; sent != 1 {
		t.Errorf("%d revocation requests to a server that does not answer, want 1", sent)
	}
	f.noToken(t, alice)
	f.noToken(t, bob)
	expectContains(t, "the log", f.log.String(), "useroauth: backend revoked", "records=2", "not_revoked=1")
}

// TestRevokeAuthServerHangs: an operator's revocation carries no deadline of its own, and an
// authorization server whose revocation endpoint never answers must not hold it: the request is
// given up after the backend's Timeout, and the record is removed all the same.
func TestRevokeAuthServerHangs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice, _ := connected(t, f)
	f.asLink.hangRevoke.Store(true)
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		// context.Background: the admin endpoint's request context has no deadline either.
		n, err := f.svc.RevokeSubject(context.Background(), alice)
		done <- result{n, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(time.Minute): // a liveness bound, far above the fixture's 1s Timeout
		t.Fatal("RevokeSubject still waits for a revocation endpoint that never answers")
	}
	if res.err != nil || res.n != 1 {
		t.Fatalf("RevokeSubject: %d, %v; want 1 record removed", res.n, res.err)
	}
	f.noToken(t, alice)
	expectContains(t, "the log", f.log.String(), "revocation at the authorization server failed")
}

// TestRevocationRacesRefresh: a refresh that lands while a user's disconnect or an operator's
// revocation is at the authorization server (revoking the tokens it read) must not leave the
// caller connected with the refreshed tokens: the record is gone afterwards, and the caller's
// next call asks for consent, for the user's disconnect and the operator's revocation of a
// subject or a backend alike.
func TestRevocationRacesRefresh(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		revoke func(f *fixture, alice vault.Caller) (int, error)
	}{
		{"disconnect", func(f *fixture, alice vault.Caller) (int, error) {
			ok, err := f.svc.Disconnect(t.Context(), alice, backendName, "user")
			return map[bool]int{true: 1}[ok], err
		}},
		{"subject", func(f *fixture, alice vault.Caller) (int, error) { return f.svc.RevokeSubject(t.Context(), alice) }},
		{"backend", func(f *fixture, _ vault.Caller) (int, error) { return f.svc.RevokeBackend(t.Context(), backendName) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{})
			alice, _ := connected(t, f)
			f.clock.Advance(24 * time.Hour) // the token is due: the next use refreshes
			var once sync.Once
			refresh := func() {
				once.Do(func() { _, _, _ = f.svc.Token(t.Context(), backendName, alice) })
			}
			f.onRevoke.Store(&refresh)
			if n, err := tt.revoke(f, alice); err != nil || n != 1 {
				t.Fatalf("revocation: %d, %v; want 1", n, err)
			}
			if _, err := f.svc.Vault().Get(t.Context(), alice, backendName); !errors.Is(err, vault.ErrNotFound) {
				t.Errorf("after the revocation a record is still there: %v", err)
			}
			f.noToken(t, alice)
		})
	}
}

// TestRetiredBackendsFreeTheirRecords: a caller's records are bounded by the number of per-user
// backends, and a backend the configuration no longer has (renamed, removed, or no longer
// per-user) keeps its records in the shared store until they expire unused, where no page
// shows them and no revocation names them. A connect that finds the caller's budget full with
// such records removes them and is kept, on Redis shared by a replica of the old configuration
// and one of the new; a record of a backend still configured stays.
func TestRetiredBackendsFreeTheirRecords(t *testing.T) {
	t.Parallel()
	other := func(name string) Backend {
		return Backend{Name: name, URL: "https://" + name + ".example/mcp", ClientID: "gateway-at-" + name}
	}
	old := newFixture(t, fixtureOptions{redis: true, more: []Backend{other("kept"), other("retired")}})
	// The new configuration: "retired" is gone.
	f := newFixture(t, fixtureOptions{replicaOf: old, more: []Backend{other("kept")}})
	alice := old.caller(realop.UserID)
	for _, name := range []string{"kept", "retired"} {
		if err := old.svc.Vault().Put(t.Context(), &vault.Token{Issuer: alice.Issuer, Subject: alice.Subject, Backend: name,
			Resource: "https://" + name + ".example/mcp", AuthServer: "https://" + name + ".example", ClientID: "gateway-at-" + name,
			AccessToken: "at-" + name + "-1c", Connected: old.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if status, body := f.browser(t).connect(f.link(t, alice), f.idp.Username(), f.as.Username()); status != http.StatusOK {
		t.Fatalf("connect with the budget full with a retired backend's record: %d\n%s", status, body)
	}
	f.mustToken(t, alice)
	if _, err := old.svc.Vault().Get(t.Context(), alice, "retired"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("the retired backend's record: %v, want it removed", err)
	}
	if _, err := f.svc.Vault().Get(t.Context(), alice, "kept"); err != nil {
		t.Errorf("the record of a backend still configured: %v, want it kept", err)
	}
	expectContains(t, "the log", f.log.String(), "useroauth: records of backends no longer configured removed")
}

// TestOperatorRevocationsReachRetiredBackends: records of a backend the configuration no longer
// has (removed, renamed) are the operator's to end as well. A revocation of a user removes
// them with the records of the backends configured, and a revocation naming such a backend
// removes its records, though neither can ask their server to revoke the tokens (nothing
// configured names it). Left in the store, they would come back to life when the backend
// returns to the configuration (a rollback, a rename undone): a user the operator revoked
// would be connected again, with tokens the operator believed gone. A name that holds no
// record and is not configured is still unknown (404).
func TestOperatorRevocationsReachRetiredBackends(t *testing.T) {
	t.Parallel()
	other := func(name string) Backend {
		return Backend{Name: name, URL: "https://" + name + ".example/mcp", ClientID: "gateway-at-" + name}
	}
	put := func(f *fixture, who vault.Caller, name string) {
		t.Helper()
		if err := f.svc.Vault().Put(t.Context(), &vault.Token{Issuer: who.Issuer, Subject: who.Subject, Backend: name,
			Resource: "https://" + name + ".example/mcp", AuthServer: "https://" + name + ".example", ClientID: "gateway-at-" + name,
			AccessToken: "at-" + name + "-" + who.Subject, RefreshToken: "rt-" + name + "-" + who.Subject, Connected: f.clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	// Before and after the reload: "retired" is gone, "kept" stays.
	old := newFixture(t, fixtureOptions{redis: true, more: []Backend{other("kept"), other("retired")}})
	f := newFixture(t, fixtureOptions{replicaOf: old, more: []Backend{other("kept")}})
	alice, bob := old.caller(realop.UserID), old.caller(realop.OtherUserID)
	for _, who := range []vault.Caller{alice, bob} {
		put(old, who, "kept")
		put(old, who, "retired")
	}

	n, err := f.svc.RevokeSubject(t.Context(), alice)
	if err != nil || n != 2 {
		t.Fatalf("RevokeSubject: %d, %v; want 2 (the configured backend's record and the retired one's)", n, err)
	}
	// The configuration with the backend back (old, on the same store): alice's grant is gone.
	if tok, ok, err := old.svc.Token(t.Context(), "retired", alice); ok || err != nil {
		t.Errorf("the revoked user's token for a backend back in the configuration: %q, %v, %v; want none", tok, ok, err)
	}
	if _, ok, err := old.svc.Token(t.Context(), "retired", bob); !ok || err != nil {
		t.Fatalf("another user's record of the retired backend: %v, %v; want it kept", ok, err)
	}

	n, err = f.svc.RevokeBackend(t.Context(), "retired")
	if err != nil || n != 1 {
		t.Fatalf("RevokeBackend of a backend no longer configured: %d, %v; want its one record removed", n, err)
	}
	if _, ok, err := old.svc.Token(t.Context(), "retired", bob); ok || err != nil {
		t.Errorf("a token of the revoked retired backend: %v, %v; want none", ok, err)
	}
	if _, ok, _ := old.svc.Token(t.Context(), "kept", bob); !ok {
		t.Error("the revocation of a retired backend removed another backend's record")
	}
	if _, err := f.svc.RevokeBackend(t.Context(), "retired"); !errors.Is(err, ErrUnknownBackend) {
		t.Errorf("revoking again a retired backend that holds no record: %v, want ErrUnknownBackend", err)
	}
	expectContains(t, "the log", f.log.String(), "useroauth: backend revoked")
}

// TestRecordUnderAKeyNotHeldStays: during a rollout that adds a vault key, a replica already
// updated seals with the new key while one not yet updated does not hold it (the key was
// appended in one step, or the replica runs the configuration before). The replica that cannot
// open such a record does not remove it, which would end the caller's connection on every
// replica, those that hold the key included, and leave its tokens valid at the server with
// nobody holding them: to that replica the caller is not connected (asked to connect), and
// every replica holding the key goes on using the record. A record under a key nobody holds
// any more is left to its expiry or to the caller's next connect, which replaces it.
func TestRecordUnderAKeyNotHeldStays(t *testing.T) {
	t.Parallel()
	older := newFixture(t, fixtureOptions{redis: true})
	newKey := seal.Key{ID: "k2", Secret: []byte("another-test-only-secret-of-32-bytes-or-more")}
	updated := newFixture(t, fixtureOptions{replicaOf: older, vaultKeys: append(append([]seal.Key{}, testKeys...), newKey)})
	alice, tok := connected(t, updated)

	if got, ok, err := older.svc.Token(t.Context(), backendName, alice); ok || err != nil {
		t.Fatalf("a replica without the record's key: %q, %v, %v; want not connected there", got, ok, err)
	}
	if _, err := older.svc.Vault().Get(t.Context(), alice, backendName); !errors.Is(err, vault.ErrUnreadable) {
		t.Fatalf("the record, read by the replica without its key: %v, want there and unreadable", err)
	}
	if got := updated.mustToken(t, alice); got != tok {
		t.Error("the replica holding the key got another token than the one it stored")
	}
	if who, err := updated.whoami(t, tok); err != nil || who == "" {
		t.Errorf("the backend with the token: %q, %v", who, err)
	}
	expectContains(t, "the log", older.log.String(), "useroauth: a token record is sealed under a key this replica does not hold")
}
