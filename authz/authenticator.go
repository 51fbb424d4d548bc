package authz

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/egress"
)

// Options are the runtime dependencies of New and NewAuthenticator.
type Options struct {
	// ResourceURI is the gateway's canonical resource URI (RFC 8707), e.g.
	// https://mcp.example.com/mcp: the default audience of every issuer and
	// the default "resource" of the metadata document. Required unless every
	// issuer lists audiences and resourceMetadata.resource is set. As an audience it is
	// accepted as written and in its CanonicalResource spelling, which clients ask for; so are
	// ToolsetResourceURIs.
	ResourceURI string
	// ToolsetResourceURIs are the resource URIs of the gateway's tool set endpoints (each set's
	// own path under the public URL), accepted as audiences besides ResourceURI by every issuer
	// that lists no audiences: a client of a set asks for a token for the set's resource.
	ToolsetResourceURIs []string
	// Logger receives the decision log and WatchKeys' reports. Default: discard.
	Logger *slog.Logger
	// HTTPClient fetches discovery documents and key sets. Default: a client
	// with FetchTimeout as its timeout.
	HTTPClient *http.Client
	// Now is the clock for exp, nbf, cache expiry and fetch back-off.
	// Default time.Now.
	Now func() time.Time
	// DPoP are what DPoP-bound tokens need (a replay store, the nonce keys); used only when an
	// issuer accepts them (auth.dpop).
	DPoP DPoPOptions
	// Previous is the authenticator this one replaces (a configuration reload). Its issuers
	// whose settings are unchanged are taken over with what they fetched (discovery, key set),
	// so a reload needs no network call for them and keeps their keys while the issuer is
	// unreachable. Nil: every issuer starts unfetched.
	Previous *Authenticator
	// CaseInsensitive are the backends whose resource paths are case-insensitive: the policy
	// matches their resource URIs case-folded (Policy.SetCaseInsensitive).
	CaseInsensitive []string
}

// ErrNoAudience is returned by New when an issuer has no audience and
// Options.ResourceURI is empty.
var ErrNoAudience = errors.New("authz: issuer has no audience and no resource URI was given")

// Authenticator verifies bearer tokens against the configured issuers. It is
// safe for concurrent use.
type Authenticator struct {
	issuers map[string]*issuer
	order   []string // the issuers in configuration order, for reports
	reader  claimReader
	skew    time.Duration
	now     func() time.Time
	cache   *tokenCache // nil when disabled
	log     *slog.Logger
	// retryBase is the first back-off of WatchKeys (auth.discoveryRetryInterval).
	retryBase time.Duration
	// dpopModes are the issuers' DPoP modes, which their principals carry.
	dpopModes map[string]string
	closing   sync.Once // Close
}

// ValidUntil is the last instant p's token is accepted: its expiry plus the clock skew allowed.
// What a token opened that lasts (a listen) ends then, as the token would be refused.
func (a *Authenticator) ValidUntil(p *Principal) time.Time { return p.ExpiresAt.Add(a.skew) }

// Close is for a configuration that is replaced, abandoned or stopped. It ends the discovery and
// key-set fetches still running for the issuers no other Authenticator took over (each fetch is
// otherwise detached from its callers and would run until auth.fetchTimeout: a reload given up
// on SIGTERM left it open on a hanging issuer), and closes the idle connections of the clients
// a's issuers fetch with: each Authenticator builds its own client (the egress rule is the
// configuration's), whose kept-alive connections would otherwise stay open with their goroutines
// until their idle timeout, one set per reload. An issuer carried into the next configuration
// keeps its fetches and its client, which dials again when it next fetches. a is not used after.
func (a *Authenticator) Close() {
	a.closing.Do(func() {
		a.release()
		for _, is := range a.issuers {
			if is.client != nil {
				is.client.CloseIdleConnections()
			}
		}
	})
}

// release counts a out of its issuers' users, ending the fetches of those it was the last of.
func (a *Authenticator) release() {
	for _, is := range a.issuers {
		is.mu.Lock()
		is.users--
		last := is.users == 0
		is.mu.Unlock()
		if last {
			is.end()
		}
	}
}

// NewAuthenticator validates cfg and builds an Authenticator. It makes no
// network calls: issuers are discovered on first use.
func NewAuthenticator(cfg Config, opts Options) (*Authenticator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	givenClient := opts.HTTPClient
	cfg, opts = withDefaults(cfg, opts)
	a := &Authenticator{
		issuers:   make(map[string]*issuer, len(cfg.Issuers)),
		reader:    claimReader{scopeClaims: cfg.ScopeClaim, groupsClaim: cfg.GroupsClaim, hierarchy: compileHierarchy(cfg.ScopeHierarchy)},
		skew:      cfg.ClockSkew,
		now:       opts.Now,
		log:       opts.Logger,
		retryBase: cfg.DiscoveryRetryInterval,
		dpopModes: make(map[string]string, len(cfg.Issuers)),
	}
	if cfg.TokenCacheSize > 0 {
		a.cache = newTokenCache(cfg.TokenCacheSize, cfg.TokenCachePerCaller)
	}
	for _, ic := range cfg.Issuers {
		is, err := newIssuer(cfg, ic, opts)
		if err != nil {
			// The issuers taken so far count a among their users, and nobody will close a:
			// those taken over would keep their fetches past their last real user's Close.
			a.release()
			return nil, err
		}
		is.settings.client = givenClient
		if prev := opts.Previous; prev != nil {
			if old, ok := prev.issuers[ic.Issuer]; ok && old.settings.equal(is.settings) {
				is.end()
				is = old
			}
		}
		is.mu.Lock()
		is.users++
		is.mu.Unlock()
		a.issuers[ic.Issuer] = is
		a.order = append(a.order, ic.Issuer)
		a.dpopModes[ic.Issuer] = cfg.dpopMode(ic)
	}
	return a, nil
}

func withDefaults(cfg Config, opts Options) (Config, Options) {
	cfg.ClockSkew = orDefault(cfg.ClockSkew, DefaultClockSkew)
	cfg.DiscoveryRetryInterval = orDefault(cfg.DiscoveryRetryInterval, DefaultDiscoveryRetryInterval)
	cfg.JWKSMinRefreshInterval = orDefault(cfg.JWKSMinRefreshInterval, DefaultJWKSMinRefreshInterval)
	cfg.JWKSMaxAge = orDefault(cfg.JWKSMaxAge, DefaultJWKSMaxAge)
	cfg.FetchTimeout = orDefault(cfg.FetchTimeout, DefaultFetchTimeout)
	if len(cfg.ScopeClaim) == 0 {
		cfg.ScopeClaim = DefaultScopeClaims()
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = DefaultGroupsClaim
	}
	if cfg.TokenCacheSize == 0 {
		cfg.TokenCacheSize = DefaultTokenCacheSize
	}
	if cfg.TokenCachePerCaller == 0 {
		cfg.TokenCachePerCaller = DefaultTokenCachePerCaller
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = defaultClient(cfg, nil)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, opts
}

// defaultClient fetches discovery documents and key sets: the issuers (and configured key-set
// URLs) are the operator's; a jwks_uri and every redirect are the issuer's to name, judged by
// internal/egress on the URL and on each connection (a name the issuer's document uses is held
// to the rule of the address it resolves to). d dials; nil is egress's default dialer.
func defaultClient(cfg Config, d *net.Dialer) *http.Client {
	var urls []string
	for _, ic := range cfg.Issuers {
		urls = append(urls, ic.Issuer, ic.JWKSURL)
	}
	p := &egress.Policy{Hosts: egress.HostsOf(urls...)}
	return &http.Client{Timeout: cfg.FetchTimeout, Transport: p.Transport(d), CheckRedirect: egress.CheckRedirect}
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func newIssuer(cfg Config, ic IssuerConfig, opts Options) (*issuer, error) {
	auds := slices.Clone(ic.Audiences)
	if len(auds) == 0 {
		if opts.ResourceURI == "" {
			return nil, ErrNoAudience
		}
		// The metadata document's resource, when configured, is what it tells clients to ask
		// for tokens for (RFC 9728 §2).
		auds = resourceAudiences(append([]string{opts.ResourceURI, cfg.ResourceMetadata.Resource}, opts.ToolsetResourceURIs...)...)
	}
	algs := ic.Algorithms
	if len(algs) == 0 {
		algs = DefaultAlgorithms()
	}
	life, end := context.WithCancel(context.Background())
	is := &issuer{
		life: life, end: end,
		name: ic.Issuer, audiences: auds, algs: make(map[string]bool, len(algs)), algList: slices.Clone(algs),
		client: opts.HTTPClient, now: opts.Now, retryEvery: cfg.DiscoveryRetryInterval, timeout: cfg.FetchTimeout,
		settings: issuerSettings{jwksURL: ic.JWKSURL, audiences: auds, algs: algs, skew: cfg.ClockSkew,
			retryEvery: cfg.DiscoveryRetryInterval, minRefresh: cfg.JWKSMinRefreshInterval, maxAge: cfg.JWKSMaxAge,
			timeout: cfg.FetchTimeout},
	}
	for _, alg := range algs {
		is.algs[alg] = true
	}
	// Only the values the key sets need: a closure over opts would hold opts.Previous, the
	// authenticator this one replaces, and through its issuers every one before it.
	client, now := opts.HTTPClient, opts.Now
	is.newKeySet = func(url string) *keySet {
		return &keySet{
			url: url, client: client, now: now, algs: signatureAlgs(algs),
			minRefresh: cfg.JWKSMinRefreshInterval, maxAge: cfg.JWKSMaxAge, fetchTimeout: cfg.FetchTimeout,
			skew: cfg.ClockSkew, life: life,
		}
	}
	if ic.JWKSURL != "" {
		is.install(ic.JWKSURL)
	}
	return is, nil
}

// Authenticate verifies a raw bearer token and returns the caller. Errors:
// ErrNoToken for an empty token; ErrInvalidToken (see Reason) when the token
// is rejected; ErrIssuerUnavailable when the issuer's keys cannot be fetched.
// A verified token is cached until it expires, so repeated calls with the
// same token cost one fast hash, one map lookup and one comparison.
func (a *Authenticator) Authenticate(ctx context.Context, raw string) (*Principal, error) {
	if raw == "" {
		return nil, ErrNoToken
	}
	if len(raw) > maxTokenBytes {
		return nil, invalid(ReasonMalformed, "token too large")
	}
	if a.cache == nil {
		return a.verify(ctx, raw, a.now())
	}
	return a.authenticateKey(ctx, raw, a.cache.key(raw))
}

// tokenSum is the SHA-256 of raw: the token cache's key, which a DPoP proof's ath is made of
// too, so AuthenticateDPoP hashes the token once for both (authenticateSum).
func (a *Authenticator) tokenSum(raw string) [sha256.Size]byte {
	if a.cache == nil {
		return sha256.Sum256([]byte(raw))
	}
	return a.cache.key(raw)
}

// authenticateSum is Authenticate of a token already checked for size, sum being its
// tokenSum.
func (a *Authenticator) authenticateSum(ctx context.Context, raw string, sum [sha256.Size]byte) (*Principal, error) {
	if a.cache == nil {
		return a.verify(ctx, raw, a.now())
	}
	return a.authenticateKey(ctx, raw, sum)
}

// authenticateKey is the cached path of Authenticate, key being raw's SHA-256.
func (a *Authenticator) authenticateKey(ctx context.Context, raw string, key [sha256.Size]byte) (*Principal, error) {
	now := a.now()
	if p, ok := a.cache.get(key); ok {
		if now.After(p.ExpiresAt.Add(a.skew)) {
			a.cache.remove(key)
			return nil, invalid(ReasonExpired, "")
		}
		if !p.keys.withdrawn(ctx, now) {
			return p, nil
		}
		// A key left the issuer's set since: verified again below, by the set as it is now.
		a.cache.remove(key)
	}
	p, err := a.verify(ctx, raw, now)
	if err != nil {
		return nil, err
	}
	a.cache.put(key, p, now)
	return p, nil
}

// unverified are the parts of a token read before its signature is checked,
// used only to choose (or refuse) an issuer.
type unverified struct {
	alg string
	iss string
}

func peek(raw string) (unverified, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return unverified{}, invalid(ReasonMalformed, "not a compact JWS")
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	var body struct {
		Iss string `json:"iss"`
	}
	hb, err := segment(parts[0])
	if err != nil || json.Unmarshal(hb, &hdr) != nil || decodeSegment(parts[1], &body) != nil {
		return unverified{}, invalid(ReasonMalformed, "undecodable header or payload, or a member named twice")
	}
	if err := checkHeader(hb); err != nil {
		return unverified{}, err
	}
	return unverified{alg: hdr.Alg, iss: body.Iss}, nil
}

// segment decodes one segment of a token to its JSON, refusing what checkNames refuses.
func segment(seg string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return nil, err
	}
	if !checkNames(b) {
		return nil, errNameClash
	}
	return b, nil
}

// decodeSegment decodes one segment of a token into v, refusing what checkNames refuses.
func decodeSegment(seg string, v any) error {
	b, err := segment(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
