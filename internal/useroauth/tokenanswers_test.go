package useroauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// TestRefreshRefusals: an authorization server that answers a refresh with a refusal of its own
// (RFC 6749 §5.2, or an error member in a 200 answer as some servers send) has ended the grant,
// whatever the code: the record is removed and the next call asks for consent, instead of the
// caller getting a retryable error on every call for ever. The server failing (HTTP 5xx, 429,
// temporarily_unavailable, server_error) and the server refusing the gateway as its client
// (invalid_client: the operator's configuration) keep the record and stay retryable.
func TestRefreshRefusals(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		answer tokenAnswer
		ends   bool
	}{
		{"unauthorized_client", tokenAnswer{http.StatusBadRequest, `{"error":"unauthorized_client"}`}, true},
		{"unsupported_grant_type", tokenAnswer{http.StatusBadRequest, `{"error":"unsupported_grant_type"}`}, true},
		{"invalid_request with a description", tokenAnswer{http.StatusBadRequest,
			`{"error":"invalid_request","error_description":"refresh token expired"}`}, true},
		{"invalid_token with 401", tokenAnswer{http.StatusUnauthorized, `{"error":"invalid_token"}`}, true},
		{"an error in a 200 answer", tokenAnswer{http.StatusOK, `{"error":"bad_refresh_token"}`}, true},
		{"temporarily_unavailable", tokenAnswer{http.StatusBadRequest, `{"error":"temporarily_unavailable"}`}, false},
		{"server_error", tokenAnswer{http.StatusBadRequest, `{"error":"server_error"}`}, false},
		{"HTTP 503", tokenAnswer{http.StatusServiceUnavailable, `{"error":"invalid_grant"}`}, false},
		{"invalid_client", tokenAnswer{http.StatusUnauthorized, `{"error":"invalid_client"}`}, false},
		// Not refusals of the grant: a server moved or misrouted, an answer without a code.
		{"a redirect", tokenAnswer{http.StatusTemporaryRedirect, `{"error":"invalid_grant"}`}, false},
		{"HTTP 404", tokenAnswer{http.StatusNotFound, `{"error":"not_found"}`}, false},
		{"HTTP 400 without an error", tokenAnswer{http.StatusBadRequest, `{}`}, false},
		{"an unreadable code", tokenAnswer{http.StatusBadRequest, `{"error":"see <a href=x>here</a>"}`}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{}) // one each: its clock moves a day
			alice, _ := connected(t, f)
			f.clock.Advance(24 * time.Hour) // the access token expired; past any cooldown
			f.asLink.answer.Store(&tt.answer)
			_, ok, err := f.svc.Token(t.Context(), backendName, alice)
			f.asLink.answer.Store(nil)
			_, gerr := f.svc.Vault().Get(t.Context(), alice, backendName)
			switch {
			case tt.ends && (ok || err != nil || !errors.Is(gerr, vault.ErrNotFound)):
				t.Errorf("ok %v, %v, record %v; want no token, no error, the record removed (consent)", ok, err, gerr)
			case !tt.ends && (ok || !errors.Is(err, ErrUnavailable) || gerr != nil):
				t.Errorf("ok %v, %v, record %v; want ErrUnavailable and the record kept", ok, err, gerr)
			}
			logs := f.log.String()
			if strings.Contains(logs, "refresh token expired") {
				t.Error("the log repeats the server's error_description")
			}
			if tt.ends {
				expectContains(t, "the log", logs, "useroauth: token record removed", "refused the refresh token (")
			}
		})
	}
}

// TestUnusableTokens: an authorization server that answers a code or a refresh with tokens the
// gateway cannot send as Bearer (DPoP-bound, or another token_type: the gateway makes no
// proofs) has issued tokens nobody will use: they are revoked at once, nothing is stored, and
// the user is told why, not to try again in a moment (which would get the same answer); a
// refresh answered so sends the user to consent, whose page then says why. No log line
// carries the tokens.
func TestUnusableTokens(t *testing.T) {
	t.Parallel()
	dpop := &tokenAnswer{http.StatusOK,
		`{"access_token":"at-unusable-7f3a","token_type":"DPoP","refresh_token":"rt-unusable-7f3a","expires_in":300}`}
	t.Run("code exchange", func(t *testing.T) {
		f := newFixture(t, fixtureOptions{})
		alice := f.caller(realop.UserID)
		f.asLink.answer.Store(dpop)
		before := f.asLink.revokeSent.Load()
		status, body := f.browser(t).connect(f.link(t, alice), f.idp.Username(), f.as.Username())
		if status != http.StatusBadGateway {
			t.Errorf("the callback: %d, want 502\n%s", status, body)
		}
		expectContains(t, "the page", body, "DPoP", "cannot use")
		if f.obs.count("consent failed "+FailUnusable) != 1 {
			t.Errorf("consents: %v", f.obs.counts)
		}
		if f.asLink.revokeSent.Load()-before != 2 {
			t.Errorf("%d revocation requests, want 2 (both tokens)", f.asLink.revokeSent.Load()-before)
		}
		f.noToken(t, alice)
		noneLogged(t, f, "at-unusable-7f3a", "rt-unusable-7f3a")
	})
	t.Run("refresh", func(t *testing.T) {
		f := newFixture(t, fixtureOptions{})
		alice, _ := connected(t, f)
		f.clock.Advance(24 * time.Hour)
		f.asLink.answer.Store(dpop)
		before := f.asLink.revokeSent.Load()
		_, ok, err := f.svc.Token(t.Context(), backendName, alice)
		if ok || err != nil {
			t.Errorf("Token: ok %v, %v; want consent", ok, err)
		}
		if _, err := f.svc.Vault().Get(t.Context(), alice, backendName); !errors.Is(err, vault.ErrNotFound) {
			t.Errorf("the record: %v, want removed", err)
		}
		if f.asLink.revokeSent.Load()-before < 2 {
			t.Errorf("%d revocation requests, want the unusable tokens revoked", f.asLink.revokeSent.Load()-before)
		}
		noneLogged(t, f, "at-unusable-7f3a", "rt-unusable-7f3a")
	})
}

func noneLogged(t *testing.T, f *fixture, secrets ...string) {
	t.Helper()
	logs := f.log.String()
	for _, s := range append(secrets, asClientSecret) {
		if strings.Contains(logs, s) {
			t.Errorf("the log holds %q", s)
		}
	}
}

// TestRevocationRefusedForOneToken: a revocation endpoint that refuses the refresh token (RFC
// 7009 §2.2.1 unsupported_token_type: a server that does not revoke refresh tokens) is still
// asked to revoke the access token; a server that does not answer is not waited for twice.
func TestRevocationRefusedForOneToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice, _ := connected(t, f)
	f.asLink.refuseRefreshRevocation.Store(true)
	before, reached := f.asLink.revokeSent.Load(), f.revocations.Load()
	if removed, err := f.svc.Disconnect(t.Context(), alice, backendName, "user"); err != nil || !removed {
		t.Fatalf("Disconnect: %v, %v", removed, err)
	}
	if sent := f.asLink.revokeSent.Load() - before; sent != 2 {
		t.Errorf("%d revocation requests, want 2: the access token too", sent)
	}
	if f.revocations.Load()-reached != 1 {
		t.Errorf("%d revocation requests reached the server, want the access token's", f.revocations.Load()-reached)
	}

	alice, _ = connected(t, f)
	f.asLink.refuseRefreshRevocation.Store(false)
	f.asLink.hangRevoke.Store(true)
	before = f.asLink.revokeSent.Load()
	if removed, err := f.svc.Disconnect(t.Context(), alice, backendName, "user"); err != nil || !removed {
		t.Fatalf("Disconnect: %v, %v", removed, err)
	}
	if sent := f.asLink.revokeSent.Load() - before; sent != 1 {
		t.Errorf("%d revocation requests to a server that does not answer, want 1", sent)
	}
	f.noToken(t, alice)
}

// TestTokenAnswerFields: the members of a token answer beside the tokens, in the shapes servers
// send: expires_in as a number, a numeric string, absent, null, zero, negative, fractional,
// huge or not a number, and scope absent, narrower or wider than asked or not a string. A
// usable access token is kept with a lifetime that is the server's when it makes sense and
// DefaultTokenLifetime otherwise, the scope the server granted (the one asked when it says
// none, RFC 6749 §5.1), and a connect never fails for a member the gateway does not need.
func TestTokenAnswerFields(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	const asked = "openid offline_access notes"
	for _, tt := range []struct {
		name, members string
		life          time.Duration
		scope         string
	}{
		{"expires_in a number", `"expires_in":3600,"scope":"notes"`, time.Hour, "notes"},
		{"expires_in a string", `"expires_in":"1800","scope":"notes openid"`, 30 * time.Minute, "notes openid"},
		{"expires_in absent, scope absent", ``, DefaultTokenLifetime, asked},
		{"expires_in null", `"expires_in":null`, DefaultTokenLifetime, asked},
		{"expires_in zero", `"expires_in":0`, DefaultTokenLifetime, asked},
		{"expires_in negative", `"expires_in":-60`, DefaultTokenLifetime, asked},
		{"expires_in fractional", `"expires_in":59.9`, DefaultTokenLifetime, asked},
		{"expires_in huge", `"expires_in":1e30`, DefaultTokenLifetime, asked},
		{"expires_in not a number", `"expires_in":"soon"`, DefaultTokenLifetime, asked},
		{"expires_in a boolean", `"expires_in":true`, DefaultTokenLifetime, asked},
		{"scope wider", `"expires_in":600,"scope":"notes admin"`, 10 * time.Minute, "notes admin"},
		{"scope a list", `"expires_in":600,"scope":["notes","admin"]`, 10 * time.Minute, "notes admin"},
		{"scope an object", `"expires_in":600,"scope":{"notes":true}`, 10 * time.Minute, asked},
		// An error member without a code is no refusal: serializers that write every field.
		{"error null", `"expires_in":600,"error":null,"error_description":null`, 10 * time.Minute, asked},
		{"error empty", `"expires_in":600,"error":""`, 10 * time.Minute, asked},
		{"error false", `"expires_in":600,"error":false`, 10 * time.Minute, asked},
	} {
		t.Run(tt.name, func(t *testing.T) {
			alice := f.caller(realop.UserID)
			body := `{"access_token":"at-fields","token_type":"Bearer","refresh_token":"rt-fields"`
			if tt.members != "" {
				body += "," + tt.members
			}
			f.asLink.answer.Store(&tokenAnswer{http.StatusOK, body + "}"})
			status, page := f.browser(t).connect(f.link(t, alice), f.idp.Username(), f.as.Username())
			f.asLink.answer.Store(nil)
			if status != http.StatusOK {
				t.Fatalf("connect: %d\n%s", status, page)
			}
			e, err := f.svc.Vault().Get(t.Context(), alice, backendName)
			if err != nil {
				t.Fatal(err)
			}
			if life := e.Expiry.Sub(e.Connected); life != tt.life {
				t.Errorf("lifetime %s, want %s", life, tt.life)
			}
			if e.Scope != tt.scope {
				t.Errorf("scope %q, want %q", e.Scope, tt.scope)
			}
			if _, err := f.svc.Vault().Take(t.Context(), alice, backendName); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRefreshAnswerWithEmptyError: a refresh answered with new tokens beside an error member
// that says nothing (null, "": a serializer writing every field) is a success: the rotated
// tokens are stored and used, not taken for a failure that would lose them (the server has
// rotated the refresh token the record holds, so the grant would end at the next refresh).
func TestRefreshAnswerWithEmptyError(t *testing.T) {
	t.Parallel()
	for _, member := range []string{`"error":null,"error_description":null,"error_uri":null`, `"error":""`, `"error":false`} {
		t.Run(member, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{}) // one each: its clock moves a day
			alice, _ := connected(t, f)
			f.clock.Advance(24 * time.Hour) // the access token expired; past any cooldown
			f.asLink.answer.Store(&tokenAnswer{http.StatusOK,
				`{"access_token":"at-rotated-e0","token_type":"Bearer","refresh_token":"rt-rotated-e0","expires_in":600,` + member + `}`})
			tok, ok, err := f.svc.Token(t.Context(), backendName, alice)
			f.asLink.answer.Store(nil)
			if err != nil || !ok || tok != "at-rotated-e0" {
				t.Fatalf("token %q, ok %v, %v; want the refreshed token", tok, ok, err)
			}
			if e, err := f.svc.Vault().Get(t.Context(), alice, backendName); err != nil || e.RefreshToken != "rt-rotated-e0" {
				t.Fatalf("record %v, %v; want the rotated refresh token kept", e, err)
			}
		})
	}
}

// TestConnectAgainRevokesTheOldGrant: a user who connects a backend again (a connect page
// opened before the first connect finished, or to change accounts) replaces the record; the
// tokens of the one replaced are revoked, not left valid at the server with nobody holding them.
func TestConnectAgainRevokesTheOldGrant(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice := f.caller(realop.UserID)
	// A connect page opened in one browser, left while the user connects in another.
	stale := f.browser(t)
	link := f.link(t, alice)
	status, page := stale.openLink(link, f.idp.Username())
	if status != http.StatusOK {
		t.Fatalf("the connect page: %d\n%s", status, page)
	}
	if status, body := f.browser(t).connect(f.link(t, alice), f.idp.Username(), f.as.Username()); status != http.StatusOK {
		t.Fatalf("connect: %d\n%s", status, body)
	}
	first := f.mustToken(t, alice)
	before := f.revocations.Load()
	_, where, _ := stale.post(link, url.Values{"csrf": {csrfOf(t, page)}})
	if status, _, body := stale.login(where, f.as.Username()); status != http.StatusOK {
		t.Fatalf("connecting again: %d\n%s", status, body)
	}
	if second := f.mustToken(t, alice); second == first {
		t.Fatal("the second connect kept the first token")
	}
	if n := f.revocations.Load() - before; n != 2 {
		t.Errorf("%d revocation requests, want 2 (the replaced record's tokens)", n)
	}
	noneLogged(t, f, first)
}

// TestErrorCodesShownAsCodes: an error code an authorization server sends (in the callback's
// error, or a token endpoint's refusal) reaches the page and the log only when it looks like an
// error code (letters, digits, _ . : -): text made to read as a message from the gateway
// ("call this number") is shown as "invalid". The error_description is never shown or logged.
func TestErrorCodesShownAsCodes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice := f.caller(realop.UserID)
	for _, hostile := range []string{"Your account is locked. Call +1 555 0100", "<b>login_required</b>", "a b"} {
		b := f.browser(t)
		u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
		status, _, body := b.get(withQuery(u, map[string]string{"error": hostile, "error_description": "described-7d1c"}, "code"))
		if status != http.StatusForbidden || strings.Contains(body, "Call +1") || strings.Contains(body, "login_required") ||
			strings.Contains(body, "(a b)") || !strings.Contains(body, "(invalid)") {
			t.Errorf("error %q: %d\n%s", hostile, status, body)
		}
	}
	b := f.browser(t)
	u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
	status, _, body := b.get(withQuery(u, map[string]string{"error": "interaction_required", "error_description": "described-7d1c"}, "code"))
	if status != http.StatusForbidden || !strings.Contains(body, "(interaction_required)") {
		t.Errorf("a plain error code: %d\n%s", status, body)
	}
	if strings.Contains(f.log.String(), "described-7d1c") || strings.Contains(body, "described-7d1c") {
		t.Error("the error_description was shown or logged")
	}
}

// TestTokenWithoutLifetimeOrRefresh: a server that issues an access token without expires_in
// and without a refresh token (tokens that do not expire, as many SaaS servers issue) has it
// used until the backend refuses it, not dropped after an assumed lifetime, which sent the user
// to consent every few minutes; the backend's refusal then sends them to consent.
func TestTokenWithoutLifetimeOrRefresh(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice := f.caller(realop.UserID)
	f.asLink.answer.Store(&tokenAnswer{http.StatusOK, `{"access_token":"at-forever-5e2b","token_type":"Bearer"}`})
	status, page := f.browser(t).connect(f.link(t, alice), f.idp.Username(), f.as.Username())
	f.asLink.answer.Store(nil)
	if status != http.StatusOK {
		t.Fatalf("connect: %d\n%s", status, page)
	}
	f.clock.Advance(vault.DefaultRecordIdle - time.Hour) // unused for almost as long as a record may be
	before := f.asLink.tokenSent.Load()
	if tok := f.mustToken(t, alice); tok != "at-forever-5e2b" {
		t.Errorf("token %q", tok)
	}
	if n := f.asLink.tokenSent.Load() - before; n != 0 {
		t.Errorf("%d token requests for a token without refresh", n)
	}
	f.svc.Rejected(t.Context(), backendName, alice.Issuer+"#"+alice.Subject, "at-forever-5e2b")
	f.noToken(t, alice)
	noneLogged(t, f, "at-forever-5e2b")
}

// TestDisconnectSaysWhatHappened: the list page's note after a disconnect says the tokens were
// revoked only when the authorization server revoked them; a server without a revocation
// endpoint, or one that does not answer, leaves them valid there until they expire, and the
// user is told so (and where to end them), not that they were revoked.
func TestDisconnectSaysWhatHappened(t *testing.T) {
	t.Parallel()
	// Only the hanging server's case waits out the timeout; the others get one a loaded
	// machine cannot reach, so an answered revocation is never taken for an unanswered one.
	for _, tt := range []struct {
		name    string
		set     func(*fixture)
		want    string
		timeout time.Duration
	}{
		{"revoked", func(*fixture) {}, "revoked at the authorization server", 10 * time.Second},
		{"no revocation endpoint", func(f *fixture) { f.asLink.noRevocation.Store(true) }, "offers no revocation", 10 * time.Second},
		{"revocation hangs", func(f *fixture) { f.asLink.hangRevoke.Store(true) }, "could not be asked", 200 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{timeout: tt.timeout})
			tt.set(f)
			b := f.browser(t)
			if status, body := b.connect(f.link(t, f.caller(realop.UserID)), f.idp.Username(), f.as.Username()); status != http.StatusOK {
				t.Fatalf("connect: %d\n%s", status, body)
			}
			_, _, body := b.get(f.srv.URL + "/connect/")
			status, _, body := b.post(f.srv.URL+"/connect/b/"+backendName+"/disconnect", url.Values{"csrf": {csrfOf(t, body)}})
			if status != http.StatusOK || !strings.Contains(body, tt.want) {
				t.Errorf("disconnect: %d, want a note saying %q\n%s", status, tt.want, body)
			}
			if tt.name != "revoked" && strings.Contains(body, "revoked and removed") {
				t.Error("the note says the tokens were revoked")
			}
		})
	}
}

// refreshingRecords is the vault's records with a refresh on another replica landing, for
// each of the next left reads of a record, between that read and what the reader does with
// it: the read returns the record as it was, and the store then holds the refreshed one.
type refreshingRecords struct {
	store.Records
	left    atomic.Int64
	refresh func(ctx context.Context)
	// inRefresh: the refresh's own read is not one of the reader's.
	inRefresh atomic.Bool
}

func (r *refreshingRecords) GetRecord(ctx context.Context, owner, name string, life store.RecordLife) ([]byte, bool, error) {
	rec, ok, err := r.Records.GetRecord(ctx, owner, name, life)
	if ok && err == nil && !r.inRefresh.Load() && r.left.Add(-1) >= 0 {
		r.inRefresh.Store(true)
		r.refresh(ctx)
		r.inRefresh.Store(false)
	}
	return rec, ok, err
}

// TestConnectAgainRevokesWhatARefreshStored: a connect that replaces a record a refresh
// rewrote meanwhile (after the connect read it) revokes the refreshed tokens, the ones it
// replaced, not the ones it read: those were rotated away already, and the refreshed ones
// would stay valid at the server with nobody holding them. A record that keeps changing
// under the connect is not waited on for ever: the connect is refused as retryable, its own
// tokens revoked, and the record left as the last writer made it.
func TestConnectAgainRevokesWhatARefreshStored(t *testing.T) {
	t.Parallel()
	t.Run("once", func(t *testing.T) { connectOverRefreshes(t, 1) })
	t.Run("for ever", func(t *testing.T) { connectOverRefreshes(t, 1000) })
}

func connectOverRefreshes(t *testing.T, refreshes int64) {
	recs := &refreshingRecords{}
	f := newFixture(t, fixtureOptions{records: func(r store.Records) store.Records { recs.Records = r; return recs }})
	alice := f.caller(realop.UserID)
	// A second connect, held at the callback, started before the first connect finished.
	b := f.browser(t)
	u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
	if status, body := f.browser(t).connect(f.link(t, alice), f.idp.Username(), f.as.Username()); status != http.StatusOK {
		t.Fatalf("connect: %d\n%s", status, body)
	}
	f.mustToken(t, alice)
	const refreshedAccess, refreshedRefresh = "refreshed-access-5b1e", "refreshed-refresh-5b1e"
	recs.refresh = func(ctx context.Context) {
		e, err := f.svc.Vault().Get(ctx, alice, backendName)
		if err != nil {
			t.Errorf("the refresh's read: %v", err)
			return
		}
		tok := e.Token
		tok.AccessToken, tok.RefreshToken = refreshedAccess, refreshedRefresh
		if ok, err := f.svc.Vault().Swap(ctx, e, &tok); !ok || err != nil {
			t.Errorf("the refresh's write: %v, %v", ok, err)
		}
	}
	recs.left.Store(refreshes)
	status, _, body := b.get(u.String())
	if left := recs.left.Load(); left >= refreshes {
		t.Fatal("the connect never read the record it replaces")
	} else if refreshes > 1 {
		if status != http.StatusServiceUnavailable || left <= 0 {
			t.Fatalf("a record changing for ever: %d after %d reads, want 503 after a few\n%s", status, refreshes-left, body)
		}
		if tok := f.mustToken(t, alice); tok != refreshedAccess {
			t.Errorf("the record is %q, want the last refresh's", tok)
		}
		return
	}
	if status != http.StatusOK {
		t.Fatalf("connecting again: %d\n%s", status, body)
	}
	if tok := f.mustToken(t, alice); tok == refreshedAccess {
		t.Fatal("the refreshed record stayed: the connect's tokens were not kept")
	}
	for _, tok := range []string{refreshedAccess, refreshedRefresh} {
		if !f.asLink.revoked(tok) {
			t.Errorf("the refreshed record's %q was replaced and never revoked", tok)
		}
	}
}

// TestUnsendableTokensAreOneCallers: a token answer (HTTP 200) whose access or refresh token
// the gateway cannot send in a header (longer than 16 KiB, as a JWT listing one user's many
// groups grows; a space, a control or a non-ASCII character) is the server answering about one
// caller's grant, not the server failing: the tokens are revoked, the record goes and that caller
// is asked for consent, whose page says why; another caller's refresh is still sent at once
// instead of waiting out a cooldown of the whole backend that one user's tokens began.
func TestUnsendableTokensAreOneCallers(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 16<<10+1)
	for _, tt := range []struct{ name, access, refresh string }{
		{"access token too long", "at-" + long, "rt-unsendable-1"},
		{"space in the access token", "at-unsendable 2", "rt-unsendable-2"},
		{"control character in the access token", `at-unsendable\u00013`, "rt-unsendable-3"},
		{"non-ASCII access token", `at-unsendable-\u00e94`, "rt-unsendable-4"},
		{"refresh token too long", "at-unsendable-5", "rt-" + long},
		{"space in the refresh token", "at-unsendable-6", "rt-unsendable 6"},
	} {
		answer := &tokenAnswer{http.StatusOK, `{"access_token":"` + tt.access + `","token_type":"Bearer","refresh_token":"` +
			tt.refresh + `","expires_in":300}`}
		t.Run(tt.name+", refresh", func(t *testing.T) {
			t.Parallel()
			refreshIsOneCallers(t, answer, "with unsendable tokens", "the unsendable tokens were not revoked")
		})
		t.Run(tt.name+", code exchange", func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureOptions{})
			alice := f.caller(realop.UserID)
			f.asLink.answer.Store(answer)
			revocations := f.asLink.revokeSent.Load()
			status, body := f.browser(t).connect(f.link(t, alice), f.idp.Username(), f.as.Username())
			if status != http.StatusBadGateway {
				t.Errorf("the callback: %d, want 502\n%s", status, body)
			}
			expectContains(t, "the page", body, "cannot use")
			if f.obs.count("consent failed "+FailUnusable) != 1 {
				t.Errorf("consents: %v", f.obs.counts)
			}
			if f.asLink.revokeSent.Load() == revocations {
				t.Error("the unsendable tokens were not revoked")
			}
			f.noToken(t, alice)
		})
	}
}

// TestOversizeAnswersAreOneCallers: a token answer (HTTP 200) over maxTokenResponseBytes, as an
// id_token carrying one user's huge claims makes it, is that caller's: a refresh drops the
// record (revoking its tokens) and asks consent again, a connect says why, and neither begins
// the backend's refresh cooldown for everyone else. Answers of two distinct callers too large in
// a row are the server's: the second caller keeps the record and is told to wait.
func TestOversizeAnswersAreOneCallers(t *testing.T) {
	t.Parallel()
	answer := &tokenAnswer{http.StatusOK, `{"access_token":"at-oversize","token_type":"Bearer","refresh_token":"rt-oversize",` +
		`"expires_in":300,"id_token":"` + strings.Repeat("a", maxTokenResponseBytes) + `"}`}
	t.Run("refresh", func(t *testing.T) {
		t.Parallel()
		refreshIsOneCallers(t, answer, "too large", "alice's tokens were not revoked")
	})
	t.Run("two callers in a row", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, fixtureOptions{})
		alice, bob := connectedPair(t, f)
		f.clock.Advance(24 * time.Hour)
		f.asLink.answer.Store(answer)
		if _, ok, err := f.svc.Token(t.Context(), backendName, alice); ok || err != nil {
			t.Fatalf("alice's refresh: ok %v, %v; want consent", ok, err)
		}
		_, ok, err := f.svc.Token(t.Context(), backendName, bob)
		var retry *RetryError
		if ok || !errors.Is(err, ErrUnavailable) || !errors.As(err, &retry) {
			t.Fatalf("bob's refresh, the second too large in a row: ok %v, %v; want ErrUnavailable with a cooldown", ok, err)
		}
		if _, err := f.svc.Vault().Get(t.Context(), bob, backendName); err != nil {
			t.Errorf("bob's record: %v, want kept (the server's failure)", err)
		}
		before := f.asLink.tokenSent.Load()
		if _, _, err := f.svc.Token(t.Context(), backendName, bob); !errors.As(err, &retry) || f.asLink.tokenSent.Load() != before {
			t.Errorf("during the cooldown: %v, %d refreshes sent", err, f.asLink.tokenSent.Load()-before)
		}
	})
	t.Run("code exchange", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, fixtureOptions{})
		alice := f.caller(realop.UserID)
		f.asLink.answer.Store(answer)
		status, body := f.browser(t).connect(f.link(t, alice), f.idp.Username(), f.as.Username())
		if status != http.StatusBadGateway {
			t.Errorf("the callback: %d, want 502\n%s", status, body)
		}
		expectContains(t, "the page", body, "over 65536 bytes")
		if f.obs.count("consent failed "+FailUnusable) != 1 {
			t.Errorf("consents: %v", f.obs.counts)
		}
		f.noToken(t, alice)
	})
}

// refreshIsOneCallers: alice's refresh answered with answer (what says how, revoked is the
// failure when nothing is revoked) drops her record, revoking its tokens, and asks consent
// again; bob's refresh right after it is still sent and succeeds, as no cooldown began.
func refreshIsOneCallers(t *testing.T, answer *tokenAnswer, what, revoked string) {
	t.Helper()
	f := newFixture(t, fixtureOptions{})
	alice, bob := connectedPair(t, f)
	f.clock.Advance(24 * time.Hour) // past both access tokens' expiry
	f.asLink.answer.Store(answer)
	revocations := f.asLink.revokeSent.Load()
	if _, ok, err := f.svc.Token(t.Context(), backendName, alice); ok || err != nil {
		t.Errorf("alice's refresh answered %s: ok %v, %v; want consent", what, ok, err)
	}
	if _, err := f.svc.Vault().Get(t.Context(), alice, backendName); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("alice's record: %v, want removed", err)
	}
	if f.asLink.revokeSent.Load() == revocations {
		t.Error(revoked)
	}
	f.asLink.answer.Store(nil)
	before := f.asLink.tokenSent.Load()
	if _, ok, err := f.svc.Token(t.Context(), backendName, bob); !ok || err != nil {
		t.Fatalf("bob's refresh after alice's: ok %v, %v", ok, err)
	}
	if f.asLink.tokenSent.Load() == before {
		t.Fatal("bob's refresh was not sent")
	}
}

// TestGrantedScopeIsTheOneAsked: a token answer without a scope grants the scope the round trip
// asked (RFC 6749 §5.1), which the list page shows as granted. The scopes a backend asks may
// change between the round trip's start and its callback (the resource metadata's
// scopes_supported, kept an hour per replica, changed; a reload; the callback taken by another
// replica): what is kept is what the user was asked for, not what the callback's replica would
// ask now.
func TestGrantedScopeIsTheOneAsked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{redis: true})
	wider := newFixture(t, fixtureOptions{replicaOf: f, sharedURL: true, scopes: []string{"openid", "offline_access", "notes", "admin"}})
	alice := f.caller(realop.UserID)
	b := f.browser(t)
	u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
	o, err := url.Parse(wider.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = o.Host
	f.asLink.answer.Store(&tokenAnswer{http.StatusOK,
		`{"access_token":"at-asked","token_type":"Bearer","refresh_token":"rt-asked","expires_in":600}`})
	status, _, page := b.get(u.String())
	f.asLink.answer.Store(nil)
	if status != http.StatusOK {
		t.Fatalf("the callback on the replica asking wider scopes: %d\n%s", status, page)
	}
	e, err := f.svc.Vault().Get(t.Context(), alice, backendName)
	if err != nil {
		t.Fatal(err)
	}
	if e.Scope != "openid offline_access notes" {
		t.Errorf("granted scope %q, want the one asked, %q", e.Scope, "openid offline_access notes")
	}
}
