package authz

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"
)

var errNoJWKSURI = errors.New("discovery document has no jwks_uri")

// issuer is one trusted issuer. Its verifier is built on first use (or at
// construction when a JWKS URL is configured) so the gateway can start while
// the IdP is down; a failed discovery is retried after retryEvery.
type issuer struct {
	name       string
	audiences  []string
	algs       map[string]bool
	algList    []string
	client     *http.Client
	now        func() time.Time
	retryEvery time.Duration
	timeout    time.Duration
	newKeySet  func(url string) *keySet

	group    singleflight.Group
	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	failedAt time.Time
	lastErr  error
}

func (is *issuer) install(jwksURL string) *oidc.IDTokenVerifier {
	// Audience and time are checked by Authenticate: go-oidc takes a single
	// ClientID and hard-codes a 5-minute nbf leeway, while RFC 8707 needs a
	// set of audiences and the skew must follow configuration and the clock.
	v := oidc.NewVerifier(is.name, is.newKeySet(jwksURL), &oidc.Config{
		SupportedSigningAlgs: is.algList,
		SkipClientIDCheck:    true,
		SkipExpiryCheck:      true,
		Now:                  is.now,
	})
	is.mu.Lock()
	defer is.mu.Unlock()
	is.verifier = v
	return v
}

// ready returns the verifier, running discovery if needed.
func (is *issuer) ready(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	is.mu.Lock()
	v, failedAt, lastErr := is.verifier, is.failedAt, is.lastErr
	is.mu.Unlock()
	if v != nil {
		return v, nil
	}
	if wait := is.retryEvery - is.now().Sub(failedAt); !failedAt.IsZero() && wait > 0 {
		return nil, &unavailableError{msg: "discovery of " + is.name + " failed recently", err: lastErr, retryAfter: wait}
	}
	ch := is.group.DoChan("discover", func() (any, error) {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), is.timeout)
		defer cancel()
		jwksURL, err := discover(oidc.ClientContext(dctx, is.client), is.name)
		if err != nil {
			is.mu.Lock()
			is.failedAt, is.lastErr = is.now(), err
			is.mu.Unlock()
			return nil, err
		}
		return is.install(jwksURL), nil
	})
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %s: %w", ErrIssuerUnavailable, is.name, ctx.Err())
	case res := <-ch:
		if res.Err != nil {
			return nil, &unavailableError{msg: "discovery of " + is.name + " failed", err: res.Err, retryAfter: is.retryEvery}
		}
		return res.Val.(*oidc.IDTokenVerifier), nil
	}
}

// discover fetches the OIDC discovery document; go-oidc checks that its
// "issuer" equals the configured one (OIDC Discovery §4.3).
func discover(ctx context.Context, issuerURL string) (string, error) {
	p, err := oidc.NewProvider(ctx, issuerURL)
	if err != nil {
		return "", err
	}
	var doc struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := p.Claims(&doc); err != nil {
		return "", err
	}
	if doc.JWKSURI == "" {
		return "", errNoJWKSURI
	}
	if err := checkURL(doc.JWKSURI); err != nil {
		return "", fmt.Errorf("jwks_uri: %w", err)
	}
	return doc.JWKSURI, nil
}

func signatureAlgs(names []string) []jose.SignatureAlgorithm {
	out := make([]jose.SignatureAlgorithm, len(names))
	for i, n := range names {
		out[i] = jose.SignatureAlgorithm(n)
	}
	return out
}
