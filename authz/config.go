package authz

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/loopback"
)

// Defaults applied by New when a Config field is zero.
const (
	// DefaultClockSkew is the tolerance applied to exp, nbf and iat.
	DefaultClockSkew = 30 * time.Second
	// MaxClockSkew is the largest ClockSkew Validate accepts.
	MaxClockSkew = 5 * time.Minute
	// DefaultGroupsClaim is the claim read into Principal.Groups.
	DefaultGroupsClaim = "groups"
	// DefaultTokenCacheSize is the number of verified tokens kept.
	DefaultTokenCacheSize = 10000
	// DefaultTokenCachePerCaller is the number of verified tokens kept for one caller (issuer
	// and subject): a client holds one or two live tokens at a time (one about to expire, its
	// refreshed successor), a person a few clients; 16 leaves room for them all.
	DefaultTokenCachePerCaller = 16
	// DefaultDiscoveryRetryInterval is the least time between two failed
	// attempts at discovery or a key-set fetch for one issuer.
	DefaultDiscoveryRetryInterval = 5 * time.Second
	// DefaultJWKSMinRefreshInterval is the least time between key-set fetches
	// triggered by an unknown key id, so random kids cannot hammer the IdP.
	DefaultJWKSMinRefreshInterval = 10 * time.Second
	// DefaultJWKSMaxAge is how long a fetched key set is used before it is
	// fetched again, so keys the IdP withdrew stop being trusted.
	DefaultJWKSMaxAge = time.Hour
	// DefaultFetchTimeout bounds one discovery or key-set request.
	DefaultFetchTimeout = 5 * time.Second
)

// DefaultScopeClaims are the claims read for scopes, in order: "scope" (a
// space-separated string, RFC 9068 §2.2.3) and "scp" (an array, as some IdPs
// issue).
func DefaultScopeClaims() []string { return []string{"scope", "scp"} }

// DefaultAlgorithms are the asymmetric JWS algorithms accepted when an issuer
// names none. "none" and the HMAC algorithms are never accepted: a resource
// server does not share a secret with the IdP, and HS* with a public key as
// the secret is the classic algorithm-confusion attack.
func DefaultAlgorithms() []string {
	return []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
}

// Config is the authorization section of the gateway configuration.
type Config struct {
	// Issuers are the trusted token issuers; at least one.
	Issuers []IssuerConfig `yaml:"issuers"`
	// ClockSkew is the tolerance for exp, nbf and iat (a token issued further in the future
	// is refused). Default DefaultClockSkew; at most MaxClockSkew.
	ClockSkew time.Duration `yaml:"clockSkew"`
	// ScopeClaim lists the claims holding scopes, tried in order; the first
	// present one is used. A claim may be a space-separated string or an
	// array of strings. Default DefaultScopeClaims().
	ScopeClaim []string `yaml:"scopeClaim"`
	// GroupsClaim is the claim read into Principal.Groups (an array of
	// strings or one string). Default DefaultGroupsClaim.
	GroupsClaim string `yaml:"groupsClaim"`
	// ScopeHierarchy maps a broader scope to the narrower scopes it implies.
	// Expansion is transitive: {admin: [write], write: [read]} gives a token
	// with "admin" all three (MCP authorization: hierarchies MUST be honoured).
	ScopeHierarchy map[string][]string `yaml:"scopeHierarchy"`
	// ResourceMetadata fills the RFC 9728 protected resource metadata.
	ResourceMetadata ResourceMetadataConfig `yaml:"resourceMetadata"`
	// Policy holds the per-tool rules; deny by default.
	Policy PolicyConfig `yaml:"policy"`
	// TokenCacheSize is the number of verified tokens cached until they
	// expire, or until a key leaves their issuer's key set. Default
	// DefaultTokenCacheSize; negative disables the cache.
	TokenCacheSize int `yaml:"tokenCacheSize"`
	// TokenCachePerCaller bounds the cached tokens of one caller (issuer and subject), so that
	// one caller presenting many valid tokens pushes out only its own: past the bound, its
	// oldest cached token makes room. Default DefaultTokenCachePerCaller.
	TokenCachePerCaller int `yaml:"tokenCachePerCaller"`
	// DiscoveryRetryInterval is the least time between failed fetches of an
	// issuer's discovery document or key set; requests in between fail fast
	// with ErrIssuerUnavailable. Default DefaultDiscoveryRetryInterval.
	DiscoveryRetryInterval time.Duration `yaml:"discoveryRetryInterval"`
	// JWKSMinRefreshInterval is the least time between key-set fetches caused
	// by an unknown kid. Default DefaultJWKSMinRefreshInterval.
	JWKSMinRefreshInterval time.Duration `yaml:"jwksMinRefreshInterval"`
	// JWKSMaxAge is how long a fetched key set is trusted before it is
	// fetched again; if that fetch fails the old set stays in use. A key the
	// issuer withdrew stops admitting its tokens, cached ones too, once a
	// fetch finds it gone. Default DefaultJWKSMaxAge.
	JWKSMaxAge time.Duration `yaml:"jwksMaxAge"`
	// FetchTimeout bounds one discovery or key-set request. Default
	// DefaultFetchTimeout.
	FetchTimeout time.Duration `yaml:"fetchTimeout"`
	// DPoP accepts or requires DPoP-bound tokens with proofs of possession (RFC 9449,
	// docs/dpop.md). Default: off.
	DPoP DPoPConfig `yaml:"dpop"`
}

// IssuerConfig is one trusted issuer.
type IssuerConfig struct {
	// Issuer is the exact "iss" value and the discovery base URL. Required;
	// https, or http on a loopback host for development; no user info, query or fragment.
	// Written as the tokens' "iss" is: scheme and host in lower case, no default port (a token
	// whose "iss" is spelled otherwise matches no issuer), with a trailing slash only where
	// "iss" has one. Each issuer once: two entries that differ only in the case of scheme or
	// host, a default port or a trailing slash are one issuer, refused.
	Issuer string `yaml:"issuer"`
	// JWKSURL is the key-set URL for issuers that publish no metadata document. Empty:
	// discovered lazily from Issuer + /.well-known/openid-configuration or, where that is not
	// found, from the RFC 8414 metadata at /.well-known/oauth-authorization-server followed by
	// the issuer's path.
	JWKSURL string `yaml:"jwksURL"`
	// Audiences are the accepted "aud" values (RFC 8707), compared exactly. Default: the
	// gateway's resource URI and its tool sets', passed to New, and resourceMetadata.resource
	// when set, each as written and as a WHATWG URL parser spells it (CanonicalResource: scheme
	// and host in lower case, no default port), which is the spelling clients ask their issuer
	// for.
	Audiences []string `yaml:"audiences"`
	// Algorithms are the accepted JWS algorithms. Default DefaultAlgorithms();
	// "none" and HS* are rejected.
	Algorithms []string `yaml:"algorithms"`
	// DPoP is off, allowed or required for this issuer's tokens (RFC 9449). Empty: auth.dpop.mode.
	DPoP string `yaml:"dpop"`
}

// ResourceMetadataConfig fills the RFC 9728 document.
type ResourceMetadataConfig struct {
	// Resource is the canonical resource URI. Default: the URI passed to New. Set, it is an
	// audience of every issuer that lists none, as the URI passed to New is.
	Resource string `yaml:"resource"`
	// ScopesSupported is published and sent in 401 challenges. Keep it
	// minimal; never list offline_access. Optional.
	ScopesSupported []string `yaml:"scopesSupported"`
	// ResourceName is a human-readable name. Optional.
	ResourceName string `yaml:"resourceName"`
	// ResourceDocumentation is a URL of developer documentation. Optional.
	ResourceDocumentation string `yaml:"resourceDocumentation"`
	// ResourcePolicyURI is a URL of the data-use policy. Optional.
	ResourcePolicyURI string `yaml:"resourcePolicyURI"`
	// ResourceTosURI is a URL of the terms of service. Optional.
	ResourceTosURI string `yaml:"resourceTosURI"`
}

// Validate reports every problem in c at once, each a *configerr.Error whose key path is
// relative to the auth block (issuers[0].issuer). It changes nothing.
func (c Config) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if len(c.Issuers) == 0 {
		add("issuers", "at least one issuer is required")
	}
	seen := map[string]int{}
	for i, is := range c.Issuers {
		at := fmt.Sprintf("issuers[%d]", i)
		first, dup := seen[issuerKey(is.Issuer)]
		switch {
		case dup && c.Issuers[first].Issuer == is.Issuer:
			add(at+".issuer", "%q is already issuer %d; each issuer once", is.Issuer, first)
		case dup:
			add(at+".issuer", "%q is auth.issuers[%d].issuer %q spelled differently (%s): one issuer, whose tokens would "+
				"meet two entries' audiences, algorithms and dpop; each issuer once, written as its tokens' \"iss\"",
				configerr.URL(is.Issuer), first, configerr.URL(c.Issuers[first].Issuer), issuerSameness)
		default:
			seen[issuerKey(is.Issuer)] = i
		}
		errs = append(errs, configerr.Under(at, nil, is.validate()...)...)
	}
	if c.ClockSkew < 0 || c.ClockSkew > MaxClockSkew {
		add("clockSkew", "%s: want 0s to %s", c.ClockSkew, MaxClockSkew)
	}
	if c.TokenCachePerCaller < 0 {
		add("tokenCachePerCaller", "%d: want 1 or more (0 or left out: %d)", c.TokenCachePerCaller, DefaultTokenCachePerCaller)
	}
	for i, name := range c.ScopeClaim {
		if name == "" {
			add(fmt.Sprintf("scopeClaim[%d]", i), "empty: want a claim name")
		}
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"discoveryRetryInterval", c.DiscoveryRetryInterval}, {"jwksMinRefreshInterval", c.JWKSMinRefreshInterval},
		{"jwksMaxAge", c.JWKSMaxAge}, {"fetchTimeout", c.FetchTimeout}} {
		if d.v < 0 {
			add(d.key, "must not be negative")
		}
	}
	errs = append(errs, c.DPoP.validate()...)
	errs = append(errs, validateHierarchy(c.ScopeHierarchy), c.ResourceMetadata.validate(), c.Policy.validate(),
		c.Policy.validateIssuers(c.Issuers), c.validateDPoP())
	return errors.Join(errs...)
}

func (ic IssuerConfig) validate() []error {
	var errs []error
	if err := checkURL(ic.Issuer); err != nil {
		errs = append(errs, configerr.At("issuer", "%v", err))
	} else if strings.ContainsAny(ic.Issuer, "?#") {
		// OpenID Connect Discovery §3, RFC 8414 §2. It also keeps "issuer#subject", the key the
		// gateway holds each caller's state under, one caller's only.
		errs = append(errs, configerr.At("issuer", "%q: an issuer URL has no query or fragment", configerr.URL(ic.Issuer)))
	} else if u, err := url.Parse(ic.Issuer); err == nil && u.User != nil {
		// No token's "iss" carries user info, so such an issuer would match no token; and the
		// issuer is named in logs and readiness reasons, which must not show a password.
		errs = append(errs, configerr.At("issuer", "%q: an issuer URL has no user info", configerr.URL(ic.Issuer)))
	} else if err == nil && strings.Contains(u.Path+"/", "/.well-known/") {
		// What an identity provider's console shows. Discovery would look for the document
		// under it, and no token's "iss" is that URL.
		errs = append(errs, configerr.At("issuer", "%q: the issuer, not its discovery document: want the URL before /.well-known/ "+
			"(the tokens' \"iss\")", configerr.URL(ic.Issuer)))
	} else if exact := exactIssuer(ic.Issuer); exact != ic.Issuer {
		// "iss" is compared as an exact string (OpenID Connect Core §3.1.3.7, RFC 8414 §3.3), and
		// identity providers write the scheme and host in lower case with no default port: a
		// token's "iss" never matches this spelling, and discovery refuses the document, which
		// names the issuer as its tokens do.
		errs = append(errs, configerr.At("issuer", "%q: write it %q, as the tokens' \"iss\" is written (compared exactly: "+
			"scheme and host in lower case, no default port)", configerr.URL(ic.Issuer), configerr.URL(exact)))
	}
	if ic.JWKSURL != "" {
		if err := checkURL(ic.JWKSURL); err != nil {
			errs = append(errs, configerr.At("jwksURL", "%v", err))
		}
	}
	for j, a := range ic.Audiences {
		if a == "" {
			errs = append(errs, configerr.At(fmt.Sprintf("audiences[%d]", j), "empty: want a resource URI"))
		}
	}
	allowed := DefaultAlgorithms()
	for j, alg := range ic.Algorithms {
		if !contains(allowed, alg) {
			errs = append(errs, configerr.At(fmt.Sprintf("algorithms[%d]", j), "%q: want one of %s (asymmetric JWS algorithms only)", alg, strings.Join(allowed, ", ")))
		}
	}
	if ic.DPoP != "" && !validMode(ic.DPoP) {
		errs = append(errs, configerr.At("dpop", "%q: want off, allowed or required, or leave it out for auth.dpop.mode", ic.DPoP))
	}
	return errs
}

// issuerSameness says which spellings of an issuer URL issuerKey takes for one issuer.
const issuerSameness = "scheme and host compared in any case, a default port and a trailing slash ignored"

// issuerKey is what two spellings of one issuer URL (valid, as IssuerConfig.validate accepts it)
// have in common: scheme and host in lower case, no default port (RFC 3986 §6.2.2.1, §6.2.3),
// and the path without a trailing slash. "iss" itself is compared exactly, so one identity
// provider is configured once; these are the spellings an operator writes for one provider
// (https://idp.example, https://IDP.example:443, https://idp.example/), and a trailing slash is
// kept in the one spelling configured, since some providers write it in "iss".
func issuerKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.Scheme + "://" + dpop.Authority(u.Scheme, u) + strings.TrimSuffix(u.EscapedPath(), "/")
}

// exactIssuer is raw with its scheme and host as a token's "iss" writes them: in lower case,
// with no default port. Anything else in raw, and raw that does not parse, is left as it is.
func exactIssuer(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	scheme, rest, _ := strings.Cut(raw, "://")
	authority, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	if scheme != u.Scheme || authority != dpop.Authority(u.Scheme, u) {
		return u.Scheme + "://" + dpop.Authority(u.Scheme, u) + path
	}
	return raw
}

// checkURL accepts https URLs, and http only on loopback hosts so the local
// demo and tests can run an issuer without TLS.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	switch {
	case u.Host == "":
		return fmt.Errorf("%q is not an absolute URL", raw)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback.Host(u.Hostname()):
		return nil
	default:
		return fmt.Errorf("%q must use https (http only on loopback)", raw)
	}
}

func validateHierarchy(h map[string][]string) error {
	var errs []error
	for _, broad := range slices.Sorted(maps.Keys(h)) {
		at := "scopeHierarchy." + broad
		if !validScope(broad) {
			errs = append(errs, configerr.At(at, "%q is not a scope (printable ASCII without spaces, quotes or backslashes)", broad))
		}
		for j, n := range h[broad] {
			if !validScope(n) {
				errs = append(errs, configerr.At(fmt.Sprintf("%s[%d]", at, j), "%q is not a scope (printable ASCII without spaces, quotes or backslashes)", n))
			}
		}
	}
	return errors.Join(errs...)
}

// validScope reports whether s is a scope-token: 1*NQCHAR without space
// (RFC 6749 §3.3), which also makes it safe inside a quoted challenge value.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func (m ResourceMetadataConfig) validate() error {
	var errs []error
	for _, f := range []struct{ key, v string }{
		{"resource", m.Resource}, {"resourceDocumentation", m.ResourceDocumentation},
		{"resourcePolicyURI", m.ResourcePolicyURI}, {"resourceTosURI", m.ResourceTosURI},
	} {
		if f.v == "" {
			continue
		}
		if u, err := url.Parse(f.v); err != nil || !u.IsAbs() || u.Fragment != "" {
			errs = append(errs, configerr.At("resourceMetadata."+f.key, "%q: want an absolute URL without fragment", f.v))
		} else if u.User != nil {
			// The metadata is served to anyone, before authentication.
			errs = append(errs, configerr.At("resourceMetadata."+f.key,
				"%q: want a URL with no user information: the metadata is served to anyone", configerr.URL(f.v)))
		}
	}
	for i, s := range m.ScopesSupported {
		if !validScope(s) {
			errs = append(errs, configerr.At(fmt.Sprintf("resourceMetadata.scopesSupported[%d]", i), "%q is not a scope (printable ASCII without spaces, quotes or backslashes)", s))
		}
	}
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
