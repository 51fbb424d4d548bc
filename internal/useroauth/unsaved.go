package useroauth

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// storeRetry is how often a replica holding refreshed tokens the store refused tries to store
// them again.
const storeRetry = 250 * time.Millisecond

// unsavedError is a refresh the authorization server answered whose result the store did not
// take. The server may have rotated the refresh token (OAuth 2.1 §4.3.1): the old one in the
// store no longer works, so the fresh tokens are the user's connection and must not be lost
// with the call that failed.
type unsavedError struct {
	old   *vault.Entry
	fresh vault.Token
	err   error // wraps ErrUnavailable
}

func (u *unsavedError) Error() string { return u.err.Error() }
func (u *unsavedError) Unwrap() error { return u.err }

// pendingStore is one refresh's result that the store refused, with what storing it later needs.
type pendingStore struct {
	s   *Service
	st  *backendState
	who vault.Caller
	u   *unsavedError
}

// run keeps trying to store the fresh tokens in place of the record they replace, while this
// replica still holds the record's refresh lock (which keeps the other replicas from
// refreshing with the rotated-away token and waiting callers polling for the result); then it
// releases the lock. The window is what is left of the lock's ttl after the refresh itself (at most
// twice the timeout); a store that stays away longer loses the tokens, and the user connects
// again once the refresh token is refused.
func (p pendingStore) run(release func()) {
	defer release()
	s, st, who, u := p.s, p.st, p.who, p.u
	ctx, cancel := context.WithTimeout(context.Background(), st.cfg.lockTTL()-2*st.cfg.timeout())
	defer cancel()
	name := st.cfg.Name
	t := time.NewTicker(storeRetry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: refreshed tokens lost: the store stayed unavailable",
				slog.String("upstream", name), slog.String("subject", callerkey.Of(who.Issuer, who.Subject)))
			return
		case <-t.C:
		}
		swapped, err := storeRefreshed(ctx, s.vault, who, u.old, &u.fresh)
		if err != nil {
			continue
		}
		if !swapped && !p.stored(ctx) {
			// Disconnected or connected anew meanwhile: the fresh tokens are not kept.
			s.revokeTokens(ctx, st, &u.fresh)
			return
		}
		s.obs.Refresh(name, RefreshOK)
		s.log.LogAttrs(ctx, slog.LevelInfo, "useroauth: refreshed tokens stored once the store was back",
			slog.String("upstream", name), slog.String("subject", callerkey.Of(who.Issuer, who.Subject)))
		return
	}
}

// stored reports whether the store's record is the fresh tokens already: a write the store
// applied after the gateway gave up waiting for its answer.
func (p pendingStore) stored(ctx context.Context) bool {
	e, err := p.s.vault.Get(ctx, p.who, p.st.cfg.Name)
	return err == nil && e.AccessToken == p.u.fresh.AccessToken
}

// releaseUnlessUnsaved releases the refresh lock after a refresh, except when its result is to
// be stored later: then pendingStore.run releases it.
func releaseUnlessUnsaved(s *Service, st *backendState, who vault.Caller, err error, release func()) {
	var u *unsavedError
	if errors.As(err, &u) {
		go pendingStore{s: s, st: st, who: who, u: u}.run(release)
		return
	}
	release()
}
