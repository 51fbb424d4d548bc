// Package useroauth is per-user OAuth to backends whose authorization server is not the
// gateway's (docs/user-oauth.md): the gateway is the OAuth client of a backend's authorization
// server on behalf of each of its callers, keeps the tokens it obtains in the vault
// (internal/vault), refreshes them, sends each only to the backend it was issued for, and
// revokes them when the user disconnects or an operator revokes a caller or a backend.
//
// A call to such a backend without a token is answered with a link to the connect page (stage
// connect of the pipeline). There the user signs in to the gateway (internal/webpage, the
// approval page's sign-in), sees which backend and which scopes are asked, and continues to the
// authorization server: authorization code with PKCE (S256), a sealed state bound to the caller,
// the backend and a single-use nonce, and to this browser by a sealed cookie, the RFC 8707
// resource, and RFC 9207 iss checked on the callback. Everything between two steps is sealed in
// the browser's hands or kept in the shared store, so any replica serves any step.
package useroauth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/mcp-gateway/gateway/internal/egress"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/vault"
	"github.com/mcp-gateway/gateway/internal/webpage"
	"github.com/mcp-gateway/gateway/mrtr"
)

// Sealing purposes: each sealed value opens only as itself.
const (
	purposeLink   = "mcp-gateway/useroauth-link/v1"
	purposeState  = "mcp-gateway/useroauth-state/v1"
	purposeFlow   = "mcp-gateway/useroauth-flow/v1"
	purposeClient = "mcp-gateway/useroauth-client/v1"
)

// Observer receives the service's events for metrics. Every method must be cheap and
// non-blocking; metrics.UserOAuth implements it. upstream is a backend's name: a configured
// one's, or, for the operator's revocation of records it left, a name the configuration no
// longer has (metrics.UserOAuth counts those under its other label).
type Observer interface {
	// Consent counts a consent started (the user continued to the authorization server),
	// completed (tokens stored) or failed (reason is one of FailureReasons).
	Consent(upstream, event, reason string)
	// Refresh counts a refresh by result: ok, invalid_grant (the record was removed),
	// unavailable.
	Refresh(upstream, result string)
	// Revoked counts records removed by a user's disconnect or an operator (by: user, admin).
	Revoked(upstream, by string, n int)
}

// Consent events.
const (
	ConsentStarted   = "started"
	ConsentCompleted = "completed"
	ConsentFailed    = "failed"
)

// Reasons a consent or a page visit failed: a closed set, safe as a metric label.
const (
	FailBadState     = "bad_state"
	FailExpired      = "expired"
	FailOtherBrowser = "other_browser"
	FailWrongUser    = "wrong_user"
	FailReplayed     = "replayed"
	FailIssMismatch  = "iss_mismatch"
	FailDenied       = "denied"
	FailCodeRefused  = "code_refused"
	FailAuthServer   = "auth_server_unavailable"
	FailStore        = "store_unavailable"
	FailFull         = "too_many_tokens"
	FailCSRF         = "csrf"
	FailBadRequest   = "bad_request"
	FailTooMany      = "too_many_callbacks"
	FailUnusable     = "unusable_tokens"
	// FailTooSoon: a Connect or Disconnect posted within webpage.MinDwell of its page appearing.
	FailTooSoon = "too_soon"
)

// FailureReasons returns the closed set of failure reasons, for pre-registering metrics.
func FailureReasons() []string {
	return []string{FailBadState, FailExpired, FailOtherBrowser, FailWrongUser, FailReplayed, FailIssMismatch, FailDenied,
		FailCodeRefused, FailAuthServer, FailStore, FailFull, FailCSRF, FailBadRequest, FailTooMany, FailUnusable, FailTooSoon}
}

// Refresh results.
const (
	RefreshOK           = "ok"
	RefreshInvalidGrant = "invalid_grant"
	RefreshUnavailable  = "unavailable"
)

// Deps are what the service needs from the gateway.
type Deps struct {
	// Records keeps the vault's records; Store its refresh locks, the single-use state nonces
	// and the dynamically registered clients. Both are the shared store. Required.
	Records store.Records
	Store   store.Store
	// Replay records each state's single use, bounded per caller (the store's Replay, as for
	// DPoP proofs' jti): a signed-in user who loops through connects cannot fill the store.
	// Required.
	Replay store.Replay
	// Keys seal the links, states, cookies and registered clients (the gateway's key ring);
	// every replica holds the same. Required.
	Keys *seal.KeyRing
	// SignIn signs users in on the connect pages (the approval page's). Required.
	SignIn *webpage.SignIn
	// BaseURL is where users reach the gateway's pages: the scheme and host, and the path
	// prefix a balancer routing by path puts before the gateway's own paths
	// (https://host/team-a). The pages are at BaseURL + Config.Path. Required.
	BaseURL string
	// Logger receives the audit lines (never a token). Required.
	Logger *slog.Logger
	// Observer records metrics; nil records nothing.
	Observer Observer
	// Clock returns the current time; default time.Now.
	Clock func() time.Time
	// HTTPClient reaches backends' metadata and authorization servers; default a client that
	// follows no redirect and connects only where internal/egress allows, with the backends'
	// configured hosts and Config.AllowAddresses (reach.go). Requests to authorization
	// servers, which all carry a credential, follow no redirect whatever this client's
	// CheckRedirect (egress.Credentialed).
	HTTPClient *http.Client
}

// Service is per-user OAuth for the configured backends. It is safe for concurrent use.
type Service struct {
	cfg      Config
	deps     Deps
	prefix   pathPrefix // BaseURL's path
	vault    *vault.Vault
	backends map[string]*backendState
	order    []string // backend names in configuration order
	client   *http.Client
	log      *slog.Logger
	obs      Observer
	now      func() time.Time
	flight   singleflight.Group // refreshes, by backend and owner
	oauth    *asClient
	links    *seal.Sealer
	states   *seal.Sealer
	flows    *seal.Sealer
	clients  *seal.Sealer
	// callbacks bounds the states one caller's callbacks record (callback).
	callbacks store.ReplayBudget
	// page writes the pages' answers.
	page pageWriter
}

// backendState is one backend's configuration and what the gateway learnt of it.
type backendState struct {
	cfg  Backend
	disc *discoverer

	mu       sync.Mutex
	regKey   string
	reg      registered
	regValid bool
	// regFailKey and regCool are the failed registrations in a row (under one key) and the
	// cooldown they began; refreshCool the refresh grants that failed at the server
	// (cooldown.go).
	regFailKey  string
	regCool     cooldown
	refreshCool cooldown
	// callerCool are callers' own refresh cooldowns (at most maxCallerCooldowns), and
	// lastFailed the caller whose refresh failed last with a status, since the last answer.
	callerCool map[vault.Caller]*cooldown
	lastFailed vault.Caller
	// lastOversize is the caller whose token answer (refresh or code exchange) was last too
	// large to read, since the last answer that was not (oversizeAnswered).
	lastOversize vault.Caller
}

func (st *backendState) cachedClient(key string, now time.Time) (client, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.regValid || st.regKey != key || (!st.reg.Expires.IsZero() && !now.Before(st.reg.Expires)) {
		return client{}, false
	}
	return client{ID: st.reg.ID, Secret: st.reg.Secret}, true
}

// forgetClient drops the cached client under key when it is id.
func (st *backendState) forgetClient(key, id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.regKey == key && st.reg.ID == id {
		st.regValid = false
	}
}

func (st *backendState) keepClient(key string, r registered) client {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.regKey, st.reg, st.regValid = key, r, true
	st.regFailKey, st.regCool = "", cooldown{}
	return client{ID: r.ID, Secret: r.Secret}
}

// New builds the service from a validated configuration (Config.WithDefaults, Validate) for
// backends (each checked with Backend.Problems).
func New(cfg Config, backends []Backend, deps Deps) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Records == nil || deps.Store == nil || deps.Replay == nil || deps.Keys == nil || deps.SignIn == nil || deps.Logger == nil || deps.BaseURL == "" {
		return nil, errors.New("useroauth: Records, Store, Replay, Keys, SignIn, BaseURL and Logger are required")
	}
	if len(backends) == 0 {
		return nil, errors.New("useroauth: no backend uses per-user OAuth")
	}
	base, err := url.Parse(deps.BaseURL)
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("useroauth: BaseURL %q is not an absolute URL", deps.BaseURL)
	}
	deps.BaseURL = strings.TrimSuffix(deps.BaseURL, "/")
	v, err := vault.New(vault.Config{Keys: cfg.Keys, MaxRecordBytes: cfg.MaxRecordBytes, MaxRecordsPerSubject: len(backends),
		RecordIdle: cfg.RecordIdle, RecordMaxAge: cfg.RecordMaxAge},
		deps.Records, deps.Store, deps.Clock)
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, deps: deps, prefix: pathPrefix(strings.TrimSuffix(base.EscapedPath(), "/")), vault: v, backends: map[string]*backendState{}, client: deps.HTTPClient,
		log: deps.Logger, obs: deps.Observer, now: deps.Clock,
		links: deps.Keys.Sealer(purposeLink), states: deps.Keys.Sealer(purposeState),
		flows: deps.Keys.Sealer(purposeFlow), clients: deps.Keys.Sealer(purposeClient),
		callbacks: store.ReplayBudget{Count: maxCallbacks, Window: cfg.ConsentTTL + mrtr.ReplicaSkew}}
	if s.now == nil {
		s.now = time.Now
	}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	if s.client == nil {
		s.client = defaultClient(cfg, backends)
	}
	s.page = pageWriter{log: s.log, obs: s.obs, signIn: deps.SignIn}
	s.oauth = &asClient{http: egress.Credentialed(s.client), store: deps.Store, clients: s.clients, now: s.now, log: s.log, clientName: cfg.ClientName,
		pages: deps.BaseURL + cfg.Path}
	for i := range backends {
		b := backends[i]
		if errs := b.Problems(); len(errs) > 0 {
			return nil, fmt.Errorf("useroauth: backend %s: %w", b.Name, errors.Join(errs...))
		}
		s.backends[b.Name] = &backendState{cfg: b, disc: &discoverer{b: &b, client: s.client, now: s.now}}
		s.order = append(s.order, b.Name)
	}
	return s, nil
}

// PerUser reports whether backend's callers connect their own accounts.
func (s *Service) PerUser(backend string) bool {
	_, ok := s.backends[backend]
	return ok
}

// Backends returns the per-user backends' names, in configuration order.
func (s *Service) Backends() []string { return slices.Clone(s.order) }

// Path is the URL path prefix of the connect pages.
func (s *Service) Path() string { return s.cfg.Path }

// CloseIdleConnections closes the idle connections of the client s reaches backends'
// metadata and authorization servers with, for a replaced configuration once it retires: each
// Service builds its own client (the egress rule is the configuration's), whose kept-alive
// connections would otherwise stay open, with their goroutines, until the transport's idle
// timeout, one set per reload.
func (s *Service) CloseIdleConnections() { s.client.CloseIdleConnections() }

// Vault is the token vault (for its size and the operator's revocations).
func (s *Service) Vault() *vault.Vault { return s.vault }

type nopObserver struct{}

func (nopObserver) Consent(string, string, string) { /* records nothing */ }
func (nopObserver) Refresh(string, string)         { /* records nothing */ }
func (nopObserver) Revoked(string, string, int)    { /* records nothing */ }
