package backend

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// ErrIssuerNotExchanged: a caller's token was not exchanged because its issuer is not one of the
// backend's auth.subjectIssuers. It comes wrapped with ErrCredentials (the backend's health is
// not charged) and a JSON-RPC error the caller is answered with.
var ErrIssuerNotExchanged = errors.New("upstreams: the backend does not exchange tokens of the caller's issuer")

// ExchangesTokens reports whether b is configured for RFC 8693 token exchange, the one case in
// which the caller's verified token must be passed as Call.SubjectToken. The gateway passes it
// to no other backend.
func (b *Backend) ExchangesTokens() bool {
	return b.creds != nil && b.creds.cfg.Type == AuthTokenExchange
}

// SubjectKey is the digest of a caller's token that keys what a token-exchange backend
// answered for it (the exchanged-token cache, private lists): computed once per request by
// the caller of this package and passed beside the token, so no step hashes the token again.
//
// It is not the caller's key (callerkey.Of, authz.Principal.CallerKey), on purpose: what a
// token service answers depends on the token exchanged (its scopes, audience, claims), and one
// caller may hold several tokens at once, so an exchanged token or a list it produced is kept
// per token. Per-caller bounds and breakers are charged to the caller's key, never to this.
func SubjectKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return string(sum[:])
}

// SubjectFor returns the caller's token for a request to b: token when b exchanges tokens, else
// "", so the caller's token is not held by a request to any other backend.
func (b *Backend) SubjectFor(token string) string {
	if !b.ExchangesTokens() {
		return ""
	}
	return token
}

// checkSubjectIssuer refuses o's subject token, before anything is sent, unless the issuer of
// o's caller is one of auth.subjectIssuers: the token service of this backend receives only
// the tokens of issuers the operator named for it, whichever issuers the gateway accepts
// callers from. The issuer is that of o.Caller (callerkey.Split); a request without a caller
// is refused.
func (c *credentials) checkSubjectIssuer(o *Request) error {
	iss, _, ok := callerkey.Split(o.Caller)
	if ok && slices.Contains(c.cfg.SubjectIssuers, iss) {
		return nil
	}
	return fmt.Errorf("%w: %w: %s: %w", ErrCredentials, ErrIssuerNotExchanged, c.name, jsonrpc.NewError(jsonrpc.CodeUnauthorized,
		"The backend "+c.name+" does not take callers of your issuer: the gateway does not exchange their tokens for it"))
}

// CheckSubjectIssuer is checkSubjectIssuer for a request o of a caller of b made outside a call
// (a pre-2026 listen's session, which the bridge opens as the caller without checking it):
// nil when b exchanges no tokens. It is a function, not a method: Backend has as many methods
// as a type may.
func CheckSubjectIssuer(b *Backend, o *Request) error {
	if !b.ExchangesTokens() {
		return nil
	}
	return b.creds.checkSubjectIssuer(o)
}

// validateSubjectIssuers checks auth.subjectIssuers: for tokenExchange, at least one issuer URL;
// for any other type, none.
func (a *AuthConfig) validateSubjectIssuers() []error {
	if a.Type != AuthTokenExchange {
		if len(a.SubjectIssuers) > 0 {
			return []error{configerr.At("subjectIssuers", "applies to type %s only", AuthTokenExchange)}
		}
		return nil
	}
	if len(a.SubjectIssuers) == 0 {
		return []error{configerr.At("subjectIssuers", "required for %s with several issuers: list those whose callers' tokens may be sent to this backend's tokenURL (with one issuer, the gateway takes it)", AuthTokenExchange)}
	}
	var errs []error
	for i, iss := range a.SubjectIssuers {
		if u, err := url.Parse(iss); err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" || strings.Contains(iss, "#") {
			errs = append(errs, configerr.At(fmt.Sprintf("subjectIssuers[%d]", i), "%q: want an issuer URL", iss))
		}
	}
	return errs
}
