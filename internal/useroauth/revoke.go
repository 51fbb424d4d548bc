package useroauth

import (
	"context"
	"errors"
	"log/slog"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// ErrUnknownBackend is a revocation naming a backend that does not use per-user OAuth.
var ErrUnknownBackend = errors.New("useroauth: not a per-user backend")

// errNoRevocation is revokeTokens finding no revocation endpoint: nothing was asked, and the
// tokens stay valid at the server until they expire.
var errNoRevocation = errors.New("the authorization server has no revocation endpoint")

// Disconnect removes who's record for backend and then revokes its tokens at the authorization
// server (RFC 7009, best effort); by says who asked ("user" or "admin"), for the audit line and
// the metrics. removed is false when there was no record. The record goes first, so a refresh
// finishing meanwhile on any replica finds it gone and revokes what it got, rather than keep
// the caller connected.
func (s *Service) Disconnect(ctx context.Context, who vault.Caller, backend, by string) (removed bool, err error) {
	removed, _, err = s.disconnect(ctx, who, backend, by)
	return removed, err
}

// disconnect is Disconnect, also reporting how the revocation went: nil when the server
// revoked the tokens (or there were none), errNoRevocation, or why it could not be asked.
func (s *Service) disconnect(ctx context.Context, who vault.Caller, backend, by string) (removed bool, revoked, err error) {
	st, ok := s.backends[backend]
	if !ok {
		return false, nil, ErrUnknownBackend
	}
	e, err := s.vault.Take(ctx, who, backend)
	if err != nil || e == nil {
		return false, nil, err
	}
	if e.AccessToken != "" {
		revoked = s.revokeTokens(ctx, st, &e.Token)
	}
	s.obs.Revoked(backend, by, 1)
	s.log.LogAttrs(ctx, slog.LevelInfo, "useroauth: disconnected", slog.String("subject", callerkey.Of(who.Issuer, who.Subject)),
		slog.String("upstream", backend), slog.String("by", by))
	return true, revoked, nil
}

// RevokeSubject disconnects who from every per-user backend (the operator's revocation of a
// user), and removes who's records of backends the configuration no longer has (retired): it
// returns how many records went. Left in the store, a retired backend's record would come back
// to life with its backend (a rollback, a rename undone), connecting again a user the operator
// revoked; its tokens cannot be revoked at their server, which nothing configured names.
func (s *Service) RevokeSubject(ctx context.Context, who vault.Caller) (int, error) {
	n := 0
	for _, backend := range s.order {
		removed, err := s.Disconnect(ctx, who, backend, "admin")
		if err != nil {
			return n, err
		}
		if removed {
			n++
		}
	}
	gone, err := s.vault.RemoveRetired(ctx, who, s.PerUser)
	for _, backend := range gone {
		s.obs.Revoked(backend, "admin", 1)
		s.log.LogAttrs(ctx, slog.LevelInfo, "useroauth: disconnected", slog.String("subject", callerkey.Of(who.Issuer, who.Subject)),
			slog.String("upstream", backend), slog.String("by", "admin"), slog.Bool("configured", false))
	}
	return n + len(gone), err
}

// RevokeBackend disconnects every caller from backend (the operator's revocation of a backend):
// each record is removed and then its tokens revoked at the authorization server, best effort.
// Once that server does not answer (ErrAuthServer), the records left are removed without
// asking it: it is waited for once, not once per record, which for every user of a backend
// would hold the operator's request for hours. It returns how many records went.
func (s *Service) RevokeBackend(ctx context.Context, backend string) (int, error) {
	st, ok := s.backends[backend]
	if !ok {
		return revokeRetired(ctx, s, backend)
	}
	down, skipped := false, 0
	n, err := s.vault.EachOfBackend(ctx, backend, func(e *vault.Entry) {
		if down {
			skipped++
			return
		}
		down = errors.Is(s.revokeTokens(ctx, st, &e.Token), ErrAuthServer)
	})
	if n > 0 {
		s.obs.Revoked(backend, "admin", n)
	}
	attrs := []slog.Attr{slog.String("upstream", backend), slog.Int("records", n)}
	if skipped > 0 {
		attrs = append(attrs, slog.Int("not_revoked", skipped))
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "useroauth: backend revoked", attrs...)
	return n, err
}

// revokeRetired is RevokeBackend of a backend the configuration no longer has (removed, renamed,
// no longer per-user): its records are removed, without asking any server to revoke their
// tokens (nothing configured names it, nor the gateway's client there), so that they cannot
// come back to life with the backend. ErrUnknownBackend when the store holds none: a name
// mistyped is told apart from a backend whose records are gone.
func revokeRetired(ctx context.Context, s *Service, backend string) (int, error) {
	n, err := s.vault.EachOfBackend(ctx, backend, func(*vault.Entry) { /* nothing configured to revoke at */ })
	if n == 0 && err == nil {
		return 0, ErrUnknownBackend
	}
	s.obs.Revoked(backend, "admin", n)
	s.log.LogAttrs(ctx, slog.LevelInfo, "useroauth: backend revoked", slog.String("upstream", backend), slog.Int("records", n),
		slog.Int("not_revoked", n), slog.Bool("configured", false))
	return n, err
}

// revokeTokens asks the authorization server to revoke t's tokens (RFC 7009 §2.1): the refresh
// token, which takes the access token with it at most servers, then the access token, also
// when the server refused the first (unsupported_token_type: a server that does not revoke
// refresh tokens), though not when it did not answer (it is not waited for twice). Best
// effort: a failure is logged (never the token) and returned, and the record goes either way.
func (s *Service) revokeTokens(ctx context.Context, st *backendState, t *vault.Token) error {
	d, c, err := s.serverAndClient(ctx, st)
	if err == nil && (d.as.Issuer != t.AuthServer || c.ID != t.ClientID) {
		err = errors.New("the tokens were issued by another authorization server or to another client")
	}
	if err == nil && d.as.RevocationEndpoint == "" {
		return errNoRevocation // nothing to ask: the tokens expire on their own
	}
	if err == nil {
		err = s.oauth.revokeBoth(ctx, st, d, c, t)
	}
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "useroauth: revocation at the authorization server failed; the record is removed anyway",
			slog.String("upstream", st.cfg.Name), slog.String("error", err.Error()))
	}
	return err
}

// revokeBoth sends the two revocation requests of revokeTokens within one Timeout, whatever the
// caller's deadline (an operator's revocation has none): a server that hangs must not hold the
// revocation, nor leave a page no time to remove the record after it.
func (a *asClient) revokeBoth(ctx context.Context, st *backendState, d *discovered, c client, t *vault.Token) error {
	rctx, cancel := context.WithTimeout(ctx, st.cfg.timeout())
	defer cancel()
	var err error
	if t.RefreshToken != "" {
		err = a.revoke(rctx, &d.as, c, t.RefreshToken, "refresh_token")
	}
	if !errors.Is(err, ErrAuthServer) {
		err = errors.Join(err, a.revoke(rctx, &d.as, c, t.AccessToken, "access_token"))
	}
	return err
}
