package authz

import (
	"context"
	"slices"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// verify does the full check of a token not in the cache. Unverified header
// and issuer are read first only to refuse early and to pick the issuer
// whose keys must then verify the signature; nothing unverified is trusted.
func (a *Authenticator) verify(ctx context.Context, raw string, now time.Time) (*Principal, error) {
	if knownOnly(ctx) {
		return nil, ErrNotVerified
	}
	u, err := peek(raw)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(DefaultAlgorithms(), u.alg) {
		return nil, invalid(ReasonAlgorithm, "")
	}
	is, ok := a.issuers[u.iss]
	if !ok {
		return nil, invalid(ReasonIssuer, "")
	}
	if !is.algs[u.alg] {
		return nil, invalid(ReasonAlgorithm, "")
	}
	v, err := is.ready(ctx)
	if err != nil {
		return nil, err
	}
	stamp := is.stamp()
	slot := &failureSlot{}
	tok, err := v.Verify(context.WithValue(ctx, failureKey{}, slot), raw)
	if err != nil {
		if slot.err != nil {
			return nil, slot.err
		}
		return nil, invalid(ReasonMalformed, "")
	}
	p, err := a.accept(tok, is, now)
	if err != nil {
		return nil, err
	}
	stamp.key = slot.key
	p.keys = stamp
	return p, nil
}

// accept checks what go-oidc was told to skip or does not check (audience, exp, nbf, iat) and
// builds the Principal.
func (a *Authenticator) accept(tok *oidc.IDToken, is *issuer, now time.Time) (*Principal, error) {
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return nil, invalid(ReasonMalformed, "claims")
	}
	if !intersects(tok.Audience, is.audiences) {
		return nil, invalid(ReasonAudience, "")
	}
	if err := a.checkTimes(claims, now); err != nil {
		return nil, err
	}
	if err := checkConfirmation(claims); err != nil {
		return nil, err
	}
	p := a.reader.principal(claims)
	if p.Subject == "" {
		return nil, invalid(ReasonClaims, "no sub")
	}
	p.dpop = a.dpopModes[is.name]
	return p, nil
}

// checkTimes enforces exp, nbf and iat with the configured skew. exp is required:
// a token without it would be valid, and cached, forever. All are read by
// numericDate, as the Principal's ExpiresAt is, so the check and the cache
// agree on one instant.
//
// go-oidc reads iat but does not check it. A token issued further in the future than the
// skew allows comes from an issuer whose clock is wrong or from someone who chose its times:
// either way its lifetime, counted from that iat, is not the one the gateway would enforce.
// iat is optional (RFC 7519 §4.1.6); present, it must be a time.
func (a *Authenticator) checkTimes(claims map[string]any, now time.Time) error {
	exp, ok := numericDate(claims["exp"])
	if !ok {
		return invalid(ReasonClaims, "exp missing or not a time")
	}
	if now.After(exp.Add(a.skew)) {
		return invalid(ReasonExpired, "")
	}
	if err := a.notAfterNow(claims, "nbf", ReasonNotYetValid, now); err != nil {
		return err
	}
	return a.notAfterNow(claims, "iat", ReasonIssuedInFuture, now)
}

// notAfterNow refuses claim name, when present, if it is not a time (ReasonClaims) or lies
// more than the skew after now (reason).
func (a *Authenticator) notAfterNow(claims map[string]any, name, reason string, now time.Time) error {
	v, present := claims[name]
	if !present {
		return nil
	}
	t, ok := numericDate(v)
	if !ok {
		return invalid(ReasonClaims, name)
	}
	if now.Add(a.skew).Before(t) {
		return invalid(reason, "")
	}
	return nil
}

// maxNumericDate is the last second of the year 9999. A NumericDate beyond it is no time an
// issuer means, and from 2^63 on it has no int64 at all: Go's conversion of such a float64 is
// implementation-defined (math.MinInt64 on amd64), which read an nbf of 1e19 as the distant
// past and let the token in. Below it every value converts exactly to the second.
const maxNumericDate = 253402300799

// numericDate reads a NumericDate claim (RFC 7519 §2), false when it is not a JSON number or
// lies after maxNumericDate. A fraction of a second is dropped, as go-oidc drops it.
func numericDate(v any) (time.Time, bool) {
	f, ok := v.(float64)
	if !ok || !(f <= maxNumericDate) {
		return time.Time{}, false
	}
	return time.Unix(int64(max(f, -maxNumericDate)), 0), true
}

func intersects(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
