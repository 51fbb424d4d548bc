package authz

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// IssuerProbe is what fetching one issuer's discovery document and key set found.
type IssuerProbe struct {
	// JWKSURL is the key set's URL: the configured one, or the discovery document's jwks_uri.
	JWKSURL string
	// Discovered reports whether the discovery document was fetched (no jwksURL configured).
	Discovered bool
	// Keys is the number of keys in the set that can verify a token: public signing keys whose
	// algorithm, when the key names one, is accepted for this issuer.
	Keys int
}

// errNoUsableKey is ProbeIssuer's error for a key set without a key that can verify a token.
var errNoUsableKey = errors.New("the key set has no public signing key for an accepted algorithm")

// ProbeIssuer fetches the discovery document of cfg.Issuers[i] (unless it names its key set) and
// its key set, through the same code the authenticator uses on its first token, so an operator
// can check an issuer before any caller depends on it (gateway check-config --online).
// Discovery checks the document's issuer against the configured one exactly; a key set without
// a usable key is an error. ctx bounds the whole probe. The client is the one New builds by
// default for cfg, the whole configuration: the probe goes exactly where the authenticator
// would (internal/egress), which trusts every configured issuer's hosts, not only the probed
// one's.
func ProbeIssuer(ctx context.Context, cfg Config, i int) (IssuerProbe, error) {
	if i < 0 || i >= len(cfg.Issuers) {
		return IssuerProbe{}, fmt.Errorf("no issuer %d: the configuration has %d", i, len(cfg.Issuers))
	}
	ic := cfg.Issuers[i]
	_, opts := withDefaults(cfg, Options{})
	client := opts.HTTPClient
	var p IssuerProbe
	p.JWKSURL = ic.JWKSURL
	if p.JWKSURL == "" {
		u, err := discover(ctx, client, ic.Issuer)
		if err != nil {
			return p, err
		}
		p.JWKSURL, p.Discovered = u, true
	}
	keys, err := fetchJWKS(ctx, client, p.JWKSURL)
	if err != nil {
		return p, err
	}
	algs := ic.Algorithms
	if len(algs) == 0 {
		algs = DefaultAlgorithms()
	}
	for _, k := range keys {
		if k.Algorithm == "" || slices.Contains(algs, k.Algorithm) {
			p.Keys++
		}
	}
	if p.Keys == 0 {
		return p, errNoUsableKey
	}
	return p, nil
}
