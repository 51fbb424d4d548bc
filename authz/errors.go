package authz

import (
	"errors"
	"time"
)

// Sentinel errors returned by Authenticate. Compare with errors.Is.
var (
	// ErrNoToken means the request carried no bearer token. The gateway
	// answers 401 with a challenge that carries no error code (RFC 6750 §3.1).
	ErrNoToken = errors.New("authz: no bearer token")
	// ErrInvalidToken means a token was presented and rejected. The error
	// also carries a Reason. The gateway answers 401 with
	// error="invalid_token".
	ErrInvalidToken = errors.New("authz: invalid token")
	// ErrIssuerUnavailable means the issuer's discovery document or key set
	// could not be fetched, so the token could be neither accepted nor
	// rejected. The gateway answers 5xx: a 401 would make clients throw away
	// a token that may well be good.
	ErrIssuerUnavailable = errors.New("authz: issuer unavailable")
)

// Reasons a token is rejected: a closed set, safe as a metric label.
const (
	ReasonNone              = ""
	ReasonNoToken           = "no_token"
	ReasonMalformed         = "malformed"
	ReasonAlgorithm         = "algorithm"
	ReasonIssuer            = "issuer"
	ReasonUnknownKey        = "unknown_key"
	ReasonSignature         = "signature"
	ReasonAudience          = "audience"
	ReasonExpired           = "expired"
	ReasonNotYetValid       = "not_yet_valid"
	ReasonIssuedInFuture    = "issued_in_future"
	ReasonClaims            = "claims"
	ReasonIssuerUnavailable = "issuer_unavailable"
	ReasonOther             = "other"
)

// Reasons returns every reason Reason reports for a failure: the closed set, without ReasonNone.
func Reasons() []string {
	return []string{
		ReasonNoToken, ReasonMalformed, ReasonAlgorithm, ReasonIssuer, ReasonUnknownKey,
		ReasonSignature, ReasonAudience, ReasonExpired, ReasonNotYetValid, ReasonIssuedInFuture,
		ReasonClaims, ReasonIssuerUnavailable, ReasonOther,
		ReasonDPoPProof, ReasonDPoPNonce, ReasonDPoPReplay, ReasonDPoPBinding,
	}
}

// tokenError is an ErrInvalidToken with a reason. The detail never contains
// the token or claim values an attacker chose beyond short, bounded names.
type tokenError struct {
	reason string
	detail string
}

func (e *tokenError) Error() string {
	if e.detail == "" {
		return ErrInvalidToken.Error() + ": " + e.reason
	}
	return ErrInvalidToken.Error() + ": " + e.reason + ": " + e.detail
}

func (e *tokenError) Unwrap() error { return ErrInvalidToken }

func invalid(reason, detail string) error { return &tokenError{reason: reason, detail: detail} }

// Reason returns the label for an error from Authenticate or BearerToken:
// ReasonNone for nil, one of the Reason* constants otherwise.
func Reason(err error) string {
	var te *tokenError
	var de *dpopError
	switch {
	case err == nil:
		return ReasonNone
	case errors.As(err, &de) && de.err == nil:
		return de.reason
	case errors.As(err, &te):
		return te.reason
	case errors.Is(err, ErrNoToken):
		return ReasonNoToken
	case errors.Is(err, ErrIssuerUnavailable):
		return ReasonIssuerUnavailable
	case errors.Is(err, ErrInvalidToken):
		return ReasonMalformed
	default:
		return ReasonOther
	}
}

// unavailableError is an ErrIssuerUnavailable that knows when asking again
// can help: the issuer's key set or discovery document could not be had and
// the next fetch is allowed after retryAfter.
type unavailableError struct {
	msg        string
	err        error // the fetch failure, if any
	retryAfter time.Duration
}

func (e *unavailableError) Error() string {
	if e.err == nil {
		return ErrIssuerUnavailable.Error() + ": " + e.msg
	}
	return ErrIssuerUnavailable.Error() + ": " + e.msg + ": " + e.err.Error()
}

func (e *unavailableError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrIssuerUnavailable}
	}
	return []error{ErrIssuerUnavailable, e.err}
}

// RetryAfter returns, for an ErrIssuerUnavailable from Authenticate, how long
// until the gateway will try the issuer again, and for an ErrProofBudget from
// AuthenticateDPoP, how long until the caller's budget frees (at least one
// second), for a Retry-After header; zero when err says nothing about it.
func RetryAfter(err error) time.Duration {
	var ue *unavailableError
	if errors.As(err, &ue) {
		return max(ue.retryAfter, time.Second)
	}
	var be *budgetError
	if errors.As(err, &be) {
		return max(be.retryAfter, time.Second)
	}
	return 0
}
