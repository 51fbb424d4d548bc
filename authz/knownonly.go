package authz

import (
	"context"
	"crypto/sha256"
	"errors"
)

// ErrNotVerified means the token was not checked: it is not one verified before and still
// cached, and the request was made under KnownOnly (its client is over its rate of failed
// authentications). The gateway answers 429 with Retry-After, never 401: the token may be good.
var ErrNotVerified = errors.New("authz: token not checked: its client is over its rate of failed authentications")

type knownOnlyKey struct{}

// KnownOnly returns ctx under which Authenticate, AuthenticateBearer and AuthenticateDPoP accept
// only a token verified before and still cached (one hash and one lookup); any other is refused
// with ErrNotVerified before its signature, its key set or its DPoP proof is looked at. A client
// address over its rate of failed authentications is served like this: its callers already
// signed in go on unslowed, new tokens wait.
func KnownOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, knownOnlyKey{}, true)
}

func knownOnly(ctx context.Context) bool { return ctx.Value(knownOnlyKey{}) != nil }

// known reports whether the token whose tokenSum is sum is cached as verified.
func (a *Authenticator) known(sum [sha256.Size]byte) bool {
	if a.cache == nil {
		return false
	}
	_, ok := a.cache.get(sum)
	return ok
}
