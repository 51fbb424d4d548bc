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
	slot := &failureSlot{}
	tok, err := v.Verify(context.WithValue(ctx, failureKey{}, slot), raw)
	if err != nil {
		if slot.err != nil {
			return nil, slot.err
		}
		return nil, invalid(ReasonMalformed, "")
	}
	return a.accept(tok, is, now)
}

// accept checks what go-oidc was told to skip (audience, exp, nbf) and
// builds the Principal.
func (a *Authenticator) accept(tok *oidc.IDToken, is *issuer, now time.Time) (*Principal, error) {
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return nil, invalid(ReasonMalformed, "claims")
	}
	if !intersects(tok.Audience, is.audiences) {
		return nil, invalid(ReasonAudience, "")
	}
	if err := a.checkTimes(claims, tok.Expiry, now); err != nil {
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

// checkTimes enforces exp and nbf with the configured skew. exp is required:
// a token without it would be valid, and cached, forever.
func (a *Authenticator) checkTimes(claims map[string]any, exp time.Time, now time.Time) error {
	if _, ok := claims["exp"].(float64); !ok || exp.IsZero() {
		return invalid(ReasonClaims, "no exp")
	}
	if now.After(exp.Add(a.skew)) {
		return invalid(ReasonExpired, "")
	}
	if v, present := claims["nbf"]; present {
		nbf, ok := v.(float64)
		if !ok {
			return invalid(ReasonClaims, "nbf")
		}
		if now.Add(a.skew).Before(time.Unix(int64(nbf), 0)) {
			return invalid(ReasonNotYetValid, "")
		}
	}
	return nil
}

func intersects(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
