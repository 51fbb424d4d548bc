package mcptest

import (
	"context"
	"net/http"
)

// WithAccountToken makes the server a per-user OAuth backend behind the SDKs' auth middleware,
// usable by one account: every request to the MCP endpoint, server/discover included, whose
// Authorization is not "Bearer " + token is refused with 401 and a Bearer challenge
// (WWW-Authenticate). It is the server's middleware (WithMiddleware): one or the other.
func WithAccountToken(token string) Option {
	return WithMiddleware(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				w.Header().Set("WWW-Authenticate", "Bearer")
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
}

// AccountVault is a vault of callers' account tokens at per-user OAuth backends (the gateway's
// user token store) in which only Caller has connected an account, whose token is Token, at
// every backend. It takes no notice of a token a backend rejected.
type AccountVault struct{ Caller, Token string }

// UserToken returns Token for Caller; any other caller has no account.
func (v AccountVault) UserToken(_ context.Context, _, caller string) (string, bool, error) {
	if caller == v.Caller {
		return v.Token, true, nil
	}
	return "", false, nil
}

// Rejected does nothing: the vault keeps its token.
func (AccountVault) Rejected(context.Context, string, string, string) {}
