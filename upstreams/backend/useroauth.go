package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// AuthUserOAuth: each caller connects an account of the backend's own authorization server
// (per-user OAuth, docs/user-oauth.md); the gateway sends the backend the token that server
// issued to this caller, never the caller's own token.
const AuthUserOAuth = "userOAuth"

// UserTokens hands out the per-user OAuth tokens of backends whose Auth.Type is AuthUserOAuth
// (the gateway's token vault). caller is the caller's key (callerkey.Of).
type UserTokens interface {
	// UserToken returns caller's access token for backend; ok is false when the caller has
	// not connected an account (or it was disconnected or revoked). An error means the token
	// cannot be had now (the store or the authorization server is down).
	UserToken(ctx context.Context, backend, caller string) (token string, ok bool, err error)
	// Rejected reports that backend refused token (HTTP 401): the token is not sent again (the
	// record is refreshed before its next use, or dropped).
	Rejected(ctx context.Context, backend, caller, token string)
}

// PerUser reports whether b's callers connect their own accounts (Auth.Type AuthUserOAuth):
// its requests carry the caller's token from the vault, and what it lists differs per caller.
func (b *Backend) PerUser() bool { return b.creds != nil && b.creds.cfg.Type == AuthUserOAuth }

// AnswersAsCaller reports whether b answers as each caller: per-user OAuth (the caller's own
// account) or token exchange (the caller's token). What it answers a caller's request with is
// that caller's alone: its lists, its 429s. A function, not a method: Backend's method set is
// at its bound.
func AnswersAsCaller(b *Backend) bool { return b.PerUser() || b.ExchangesTokens() }

// userAuthorization returns the Authorization value of a request to a per-user backend, ""
// for none: o.UserToken (the pipeline looked it up for a call), else the caller's token from
// the vault for a list, else nothing (the gateway's own requests and callers who have not
// connected: a backend may serve those without a token, or refuse them).
func (b *Backend) userAuthorization(ctx context.Context, o *Request) (string, error) {
	tok := o.UserToken
	if tok == "" && o.FromCaller && o.Caller != "" && b.env.UserTokens != nil {
		t, ok, err := b.env.UserTokens.UserToken(ctx, b.name, o.Caller)
		if err != nil {
			return "", fmt.Errorf("%w: %w: %s: the caller's token is unavailable", wire.ErrUnavailable, ErrCredentials, b.name)
		}
		if ok {
			tok = t
		}
	}
	if tok == "" {
		return "", nil
	}
	o.UserToken = tok
	return "Bearer " + tok, nil
}

// ErrUserTokenNeeded is a per-user backend's 401: the request carried no caller's token (the
// gateway's own requests, a list of a caller who has not connected) or one the backend
// refused. The backend answered, so it counts as a backend error, not as a failure of its
// health.
var ErrUserTokenNeeded = errors.New("upstreams: the backend needs the caller's own token")

// userRefused handles a per-user backend's 401 to o: the vault is told (UserTokens.Rejected), so
// the refused token is never sent again: the next call refreshes it, or asks for consent.
func (b *Backend) userRefused(ctx context.Context, o *Request, resp *http.Response) error {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
	if o.UserToken != "" && o.Caller != "" && b.env.UserTokens != nil {
		b.env.UserTokens.Rejected(context.WithoutCancel(ctx), b.name, o.Caller, o.UserToken)
	}
	return fmt.Errorf("%w: %w", ErrUserTokenNeeded, jsonrpc.NewError(jsonrpc.CodeUpstreamUnavailable,
		"The backend "+b.name+" refused the caller's account token; call again: the gateway refreshes it or asks to connect the account"))
}

// authorization returns the Authorization value of o: the caller's token at a per-user
// backend, else the backend's OAuth credentials.
func (b *Backend) authorization(ctx context.Context, o *Request) (string, error) {
	if b.creds.cfg.Type == AuthUserOAuth {
		return b.userAuthorization(ctx, o)
	}
	if o.Subject != "" && b.creds.cfg.Type == AuthTokenExchange {
		if err := b.creds.checkSubjectIssuer(o); err != nil {
			return "", err
		}
	}
	return b.creds.authorization(ctx, o.Subject, o.SubjectKey, o.FromCaller)
}

// validateUserOAuth checks what the backend itself needs of a per-user backend's auth block;
// the OAuth client settings are checked by the gateway's per-user OAuth service, which owns
// them.
func (a *AuthConfig) validateUserOAuth(headers map[string]string) []error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if a.TokenURL != "" || a.Audience != "" || a.MaxCachedTokens != 0 || a.MaxLegacySessions != 0 || a.LegacySessionIdle != 0 {
		add("", "tokenURL, audience, maxCachedTokens, maxLegacySessions and legacySessionIdle do not apply to type %s: "+
			"the authorization server is discovered and each caller's tokens are kept in the vault", AuthUserOAuth)
	}
	if a.Timeout < 0 || a.RefreshBefore < 0 {
		add("timeout", "timeout and refreshBefore must not be negative")
	}
	if hasHeader(headers, "Authorization") {
		add("", "auth and an Authorization header exclude each other")
	}
	return errs
}

// userTokenFor returns token for a per-user backend (perUser), "" for any other: a caller's
// token for one backend is never sent to another.
func userTokenFor(perUser bool, token string) string {
	if token == "" || !perUser {
		return ""
	}
	return token
}
