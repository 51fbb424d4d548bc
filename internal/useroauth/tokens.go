package useroauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// Refresh bounds.
const (
	// minLockTTL is the least time one replica's refresh lock holds the others off (lockTTL).
	minLockTTL = 30 * time.Second
	// storeWindow is the least time a replica holding refreshed tokens the store refused keeps
	// trying to store them, under the lock (pendingStore).
	storeWindow = 10 * time.Second
	// waitPoll is how often a replica waiting for another's refresh looks at the record.
	waitPoll = 50 * time.Millisecond
)

// ErrUnavailable is a token that cannot be had now: the shared store or the backend's
// authorization server is down. The call is refused as retryable and forwards nothing.
var ErrUnavailable = errors.New("useroauth: the caller's token is unavailable now")

// CallerOf splits a caller key (callerkey.Of) into the vault's caller.
func CallerOf(key string) (vault.Caller, bool) {
	iss, sub, ok := callerkey.Split(key)
	return vault.Caller{Issuer: iss, Subject: sub}, ok
}

// Token returns who's access token for backend, refreshed first when it is due. ok is false
// when who has no usable token (never connected, disconnected, revoked, refused by the
// authorization server on refresh): the caller asks for consent. An error wraps ErrUnavailable.
func (s *Service) Token(ctx context.Context, backend string, who vault.Caller) (token string, ok bool, err error) {
	st, known := s.backends[backend]
	if !known {
		return "", false, nil
	}
	e, err := s.usable(ctx, st, who)
	if err != nil || e == nil {
		return "", false, err
	}
	now := s.now()
	if !refreshDue(e, st.cfg.RefreshBefore, now) {
		if !e.Refreshed.IsZero() {
			st.refreshSeen(who, e.Refreshed)
		}
		if e.Stale {
			// Read under an older key: sealed again under the newest, best effort, so key
			// rotation completes as callers use their tokens.
			_, _ = s.vault.Swap(ctx, e, &e.Token)
		}
		return e.AccessToken, true, nil
	}
	if err := st.refreshCoolingDown(now, who); err != nil {
		// The server failed a refresh a moment ago: not asked again before the cooldown ends.
		if now.Before(e.Expiry) {
			return e.AccessToken, true, nil
		}
		return "", false, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	fresh, err := s.refresh(ctx, st, who, e)
	switch {
	case err == nil && fresh == nil:
		return "", false, nil
	case err == nil:
		return fresh.AccessToken, true, nil
	case now.Before(e.Expiry):
		// The refresh failed early: the token it was to replace still works.
		return e.AccessToken, true, nil
	}
	return "", false, err
}

// UserToken is Token for a caller key (CallerOf), the form the backends give (they implement
// their per-user credentials with it).
func (s *Service) UserToken(ctx context.Context, backend, caller string) (string, bool, error) {
	who, ok := CallerOf(caller)
	if !ok {
		return "", false, nil
	}
	return s.Token(ctx, backend, who)
}

// refusedAgainWithin: a backend that refuses a record's token again this soon after it refused
// one before (the refreshed one, most often) sends the caller to consent.
const refusedAgainWithin = 10 * time.Minute

// Rejected records that backend refused token for caller (HTTP 401). The first refusal of a
// record that holds a refresh token makes its access token expire, so the next call refreshes
// it first: the backend may have dropped the token before its expiry (its keys rotated, a
// session ended) while the grant still stands. A record without a refresh token, or refused
// again within refusedAgainWithin, is removed: the next call asks for consent again. A record
// refreshed meanwhile is kept.
func (s *Service) Rejected(ctx context.Context, backend, caller, token string) {
	who, ok := CallerOf(caller)
	if !ok || !s.PerUser(backend) {
		return
	}
	e, err := s.vault.Get(ctx, who, backend)
	if err != nil || e.AccessToken != token {
		return
	}
	if now := s.now(); e.RefreshToken != "" && (e.Refused.IsZero() || now.Sub(e.Refused) >= refusedAgainWithin) {
		t := e.Token
		t.Expiry, t.Refused = now, now
		if swapped, err := s.vault.Swap(ctx, e, &t); err == nil && swapped {
			s.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: the backend refused the caller's token; the next call refreshes it",
				slog.String("subject", caller), slog.String("upstream", backend))
		}
		return
	}
	if removed, err := s.vault.Delete(ctx, who, backend, e); err == nil && removed {
		s.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: the backend refused the caller's token; the record was removed",
			slog.String("subject", caller), slog.String("upstream", backend))
		// The server may still take its refresh token: not left valid with nobody holding it.
		s.revokeTokens(ctx, s.backends[backend], &e.Token)
	}
}

// usable returns who's record for backend when it may be used for this backend now: nil when
// there is none, or it does not open, or it was issued for another resource or authorization
// server than the backend's now (its configuration changed): such a record is removed.
func (s *Service) usable(ctx context.Context, st *backendState, who vault.Caller) (*vault.Entry, error) {
	e, err := s.vault.Get(ctx, who, st.cfg.Name)
	switch {
	case errors.Is(err, vault.ErrNotFound):
		return nil, nil
	case errors.Is(err, vault.ErrKeyNotHeld):
		// Sealed under a key this replica does not hold: one added by a rollout still under
		// way, which the replicas already updated open and use, or one removed. Removed here,
		// it would be gone for every replica, its tokens left valid at the server with nobody
		// holding them: to this replica the caller is not connected, and a connect replaces
		// the record, as does its expiry.
		s.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: a token record is sealed under a key this replica does not hold; left in place",
			slog.String("subject", callerkey.Of(who.Issuer, who.Subject)), slog.String("upstream", st.cfg.Name))
		return nil, nil
	case errors.Is(err, vault.ErrUnreadable):
		s.drop(ctx, who, st.cfg.Name, e, "the record does not open")
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if e.Resource != st.cfg.resource() || (st.cfg.AuthServer != "" && e.AuthServer != st.cfg.AuthServer) {
		// Tokens go only to the resource they were issued for; the server that issued them,
		// when it is still the backend's, revokes them (revokeTokens asks no other).
		if s.drop(ctx, who, st.cfg.Name, e, "the backend's resource or authorization server changed") {
			s.revokeTokens(ctx, st, &e.Token)
		}
		return nil, nil
	}
	return e, nil
}

// drop removes a record that may not be used, and says why (never what it held). It reports
// whether e was still the record (and so went, or the store failed): false when another
// replica or the user replaced it meanwhile.
func (s *Service) drop(ctx context.Context, who vault.Caller, backend string, e *vault.Entry, why string) bool {
	removed, err := s.vault.Delete(ctx, who, backend, e)
	if err != nil || !removed {
		return err != nil
	}
	s.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: token record removed", slog.String("subject", callerkey.Of(who.Issuer, who.Subject)),
		slog.String("upstream", backend), slog.String("why", why))
	return true
}

// refreshDue reports whether e's access token is to be refreshed now: within refreshBefore of
// its expiry (at most half its lifetime), or past it.
func refreshDue(e *vault.Entry, refreshBefore time.Duration, now time.Time) bool {
	if e.Expiry.IsZero() {
		return false
	}
	if refreshBefore <= 0 {
		refreshBefore = DefaultRefreshBefore
	}
	issued := e.Refreshed
	if issued.IsZero() {
		issued = e.Connected
	}
	if life := e.Expiry.Sub(issued); life > 0 {
		refreshBefore = min(refreshBefore, life/2)
	}
	return !now.Before(e.Expiry.Add(-refreshBefore))
}

// refresh refreshes who's tokens for backend once, however many calls of this replica and of
// the others need it at once: one per replica through the flight group, and one among the
// replicas through the vault's lock, the others waiting for its result. It returns the fresh
// record, nil when there is none any more (consent is needed), or an error wrapping
// ErrUnavailable.
func (s *Service) refresh(ctx context.Context, st *backendState, who vault.Caller, e *vault.Entry) (*vault.Entry, error) {
	key := st.cfg.Name + "\x00" + string(who.Owner())
	ch := s.flight.DoChan(key, func() (any, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*st.cfg.timeout())
		defer cancel()
		return s.refreshShared(rctx, st, who, e)
	})
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, ctx.Err())
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		fresh, _ := res.Val.(*vault.Entry)
		return fresh, nil
	}
}

// refreshShared takes the record's refresh lock and refreshes, or waits for the replica that
// holds it.
func (s *Service) refreshShared(ctx context.Context, st *backendState, who vault.Caller, seen *vault.Entry) (*vault.Entry, error) {
	for {
		release, ok, err := s.vault.Lock(ctx, who, st.cfg.Name, st.cfg.lockTTL())
		if err != nil {
			s.obs.Refresh(st.cfg.Name, RefreshUnavailable)
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		if ok {
			e, err := s.refreshLocked(ctx, st, who)
			releaseUnlessUnsaved(s, st, who, err, release)
			return e, err
		}
		e, err := s.awaitRefresh(ctx, st, who, seen)
		if err != nil || e != nil {
			return e, err
		}
		// The lock went without a new record (that replica failed): try to take it.
	}
}

// refreshLocked refreshes under the lock, unless another replica did between the read and the
// lock.
func (s *Service) refreshLocked(ctx context.Context, st *backendState, who vault.Caller) (*vault.Entry, error) {
	e, err := s.usable(ctx, st, who)
	if err != nil || e == nil || !refreshDue(e, st.cfg.RefreshBefore, s.now()) {
		return e, err
	}
	return s.refreshNow(ctx, st, who, e)
}

// awaitRefresh waits while another replica refreshes: the fresh record once it is stored, nil
// once the lock is free with nothing new (then this replica tries), or an error.
func (s *Service) awaitRefresh(ctx context.Context, st *backendState, who vault.Caller, seen *vault.Entry) (*vault.Entry, error) {
	t := time.NewTicker(waitPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.obs.Refresh(st.cfg.Name, RefreshUnavailable)
			return nil, fmt.Errorf("%w: waiting for another replica's refresh: %w", ErrUnavailable, ctx.Err())
		case <-t.C:
		}
		e, err := s.usable(ctx, st, who)
		switch {
		case err != nil:
			return nil, err
		case e == nil:
			return nil, nil
		case e.AccessToken != seen.AccessToken:
			return e, nil
		}
		// Free again without a new record: the other replica failed; try ourselves.
		if release, ok, err := s.vault.Lock(ctx, who, st.cfg.Name, st.cfg.lockTTL()); err == nil && ok {
			release()
			return nil, nil
		}
	}
}

// refreshNow sends the refresh grant (RFC 6749 §6) and stores the result in place of e, only
// while e is still the record (a disconnect meanwhile wins). A refusal of the grant
// (grantRefused: invalid_grant, the refresh token expired or was revoked, or any other refusal
// of the server's own) removes the record: the next call asks for consent.
func (s *Service) refreshNow(ctx context.Context, st *backendState, who vault.Caller, e *vault.Entry) (*vault.Entry, error) {
	name := st.cfg.Name
	if e.RefreshToken == "" {
		if s.now().Before(e.Expiry) {
			return e, nil
		}
		s.drop(ctx, who, name, e, "the access token expired and there is no refresh token")
		return nil, nil
	}
	d, c, err := s.serverAndClient(ctx, st)
	if err == nil && d.as.Issuer != e.AuthServer {
		// The backend names another server now: the refresh token goes only to the one that
		// issued it, never to this one (which could use it at the first with a client id it
		// knows), even when the gateway's client id is the same at both.
		s.drop(ctx, who, name, e, "the backend's authorization server changed")
		return nil, nil
	}
	if err == nil && c.ID != e.ClientID {
		s.drop(ctx, who, name, e, "the gateway's client at the authorization server changed")
		return nil, nil
	}
	var tr *tokenResponse
	if err == nil {
		rctx, cancel := context.WithTimeout(ctx, st.cfg.timeout())
		tr, err = s.oauth.tokenRequest(rctx, &d.as, c, url.Values{"grant_type": {"refresh_token"},
			"refresh_token": {e.RefreshToken}, "resource": {st.cfg.resource()}})
		cancel()
		err = st.refreshAnswered(s.now(), who, st.oversizeAnswered(who, err), s.cfg.RefreshCooldown)
	}
	var unusable *unusableError
	switch {
	case grantRefused(err):
		return s.endGrant(ctx, st, who, e, "the authorization server refused the refresh token ("+refusalCode(err)+")")
	case errors.As(err, &unusable):
		// Tokens nobody can use, and a grant that yields only such: revoked with the record's
		// own once it went, and consent (whose page says why) asked again.
		if issued := unusable.tokens(d, c); issued != nil {
			s.revokeTokens(ctx, st, issued)
		}
		fresh, err := s.endGrant(ctx, st, who, e, err.Error())
		if fresh == nil && err == nil {
			s.revokeTokens(ctx, st, &e.Token)
		}
		return fresh, err
	case err != nil:
		if invalidClient(err) {
			s.oauth.forgetClient(ctx, st, d, c)
		}
		s.obs.Refresh(name, RefreshUnavailable)
		s.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: refresh failed", slog.String("upstream", name), slog.String("error", err.Error()))
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	t := e.Token
	if tr.RefreshToken != "" {
		t.RefreshToken = tr.RefreshToken // rotated (OAuth 2.1 §4.3.1)
	}
	t.AccessToken, t.Expiry, t.Refreshed = tr.AccessToken, tokenExpiry(tr, t.RefreshToken, s.now()), s.now()
	if tr.Scope != "" {
		t.Scope = tr.Scope
	}
	swapped, err := storeRefreshed(ctx, s.vault, who, e, &t)
	switch {
	case err != nil && !vault.IsUnavailable(err):
		// The answer does not fit a record (ErrTooLarge): no retry will store it, so it is
		// not the store being away. The fresh tokens are revoked, and consent, asked again,
		// says on its page why the tokens cannot be kept.
		s.obs.Refresh(name, RefreshUnavailable)
		s.revokeTokens(ctx, st, &t)
		s.drop(ctx, who, name, e, "the refreshed tokens do not fit a record (userOAuth.maxRecordBytes)")
		return nil, nil
	case err != nil:
		s.obs.Refresh(name, RefreshUnavailable)
		return nil, &unsavedError{old: e, fresh: t, err: fmt.Errorf("%w: %w", ErrUnavailable, err)}
	case !swapped:
		// Disconnected (or replaced by a new consent) while the refresh ran: the new tokens
		// are not kept.
		s.revokeTokens(ctx, st, &t)
		return s.usable(ctx, st, who)
	}
	s.obs.Refresh(name, RefreshOK)
	return &vault.Entry{Token: t}, nil
}

// storeRefreshed stores t, e's tokens refreshed, in place of e, and reports whether it did:
// also when the record changed meanwhile without changing its tokens (the backend refused its
// access token on another call, Rejected; a replica sealed it again under the newest key),
// since the refreshed tokens are still the caller's connection (the server may have rotated the
// refresh token the record holds: kept, it would end the grant at the next refresh), keeping
// the record's Refused. false when the record holds other tokens now, or none (a disconnect, a
// new consent, another replica's refresh), which win.
func storeRefreshed(ctx context.Context, v *vault.Vault, who vault.Caller, e *vault.Entry, t *vault.Token) (bool, error) {
	cur := e
	for range maxKeepReads {
		swapped, err := v.Swap(ctx, cur, t)
		if err != nil || swapped {
			return swapped, err
		}
		now, err := v.Get(ctx, who, t.Backend)
		switch {
		case vault.IsUnavailable(err):
			return false, err
		case err != nil || now.AccessToken != e.AccessToken || now.RefreshToken != e.RefreshToken:
			return false, nil
		}
		cur, t.Refused = now, now.Refused
	}
	return false, fmt.Errorf("%w: the record kept changing while the refreshed tokens were stored", store.ErrUnavailable)
}

// endGrant removes e, whose grant the authorization server ended (why), so the next call asks
// for consent; it counts the refresh as refused. A record changed meanwhile that still holds
// e's refresh token (the backend refused its access token, Rejected; sealed again) goes too;
// one that holds another (refreshed or connected anew meanwhile: the refused token was already
// rotated away) is the caller's connection, not consent.
func (s *Service) endGrant(ctx context.Context, st *backendState, who vault.Caller, e *vault.Entry, why string) (*vault.Entry, error) {
	s.obs.Refresh(st.cfg.Name, RefreshInvalidGrant)
	cur := e
	for range maxKeepReads {
		if s.drop(ctx, who, st.cfg.Name, cur, why) {
			return nil, nil
		}
		now, err := s.usable(ctx, st, who)
		if err != nil || now == nil || now.RefreshToken != e.RefreshToken {
			return now, err
		}
		cur = now
	}
	return nil, fmt.Errorf("%w: the record kept changing while it was being removed", ErrUnavailable)
}

// refusalCode is the error code of an authorization server's refusal (already kept to the
// RFC 6749 charset by errorCode).
func refusalCode(err error) string {
	var oe *oauthError
	if errors.As(err, &oe) {
		return oe.Code
	}
	return ""
}

// serverAndClient discovers the backend's authorization server and the gateway's client there.
func (s *Service) serverAndClient(ctx context.Context, st *backendState) (*discovered, client, error) {
	d, err := st.disc.get(ctx)
	if err != nil {
		return nil, client{}, err
	}
	c, err := s.oauth.clientFor(ctx, st, d)
	return d, c, err
}
