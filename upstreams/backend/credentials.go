package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/expiresin"
	"github.com/mcp-gateway/gateway/internal/loopback"
	"github.com/mcp-gateway/gateway/upstreams/direct"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// Backend credential types (Config.Auth.Type).
const (
	// AuthClientCredentials: the gateway gets its own token with the OAuth 2.0 client
	// credentials grant (RFC 6749 §4.4) and sends it to the backend.
	AuthClientCredentials = "clientCredentials"
	// AuthTokenExchange: the caller's verified token is exchanged (RFC 8693) for a token whose
	// audience is the backend; the backend sees the caller's identity but never the caller's
	// token.
	AuthTokenExchange = "tokenExchange"
)

// Defaults of AuthConfig.
const (
	// DefaultTokenTimeout bounds one token endpoint request.
	DefaultTokenTimeout = 10 * time.Second
	// DefaultTokenRefreshBefore is how long before its expiry a cached token is replaced.
	DefaultTokenRefreshBefore = 30 * time.Second
	// DefaultTokenLifetime is assumed for a token issued without expires_in (RFC 6749 §5.1
	// makes it optional); short, so an unknown lifetime is not trusted for long.
	DefaultTokenLifetime = time.Minute
	// DefaultMaxExchangedTokens bounds the cache of exchanged tokens (one per caller token).
	DefaultMaxExchangedTokens = 4096
)

// RFC 8693 identifiers.
const (
	grantTokenExchange   = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
)

// maxTokenResponseBytes bounds a token endpoint answer.
const maxTokenResponseBytes = 64 << 10

// ErrCredentials: the backend's own credentials could not be obtained (the token endpoint failed
// or refused, or a call to a token-exchange backend came without the caller's token). It always
// comes wrapped together with wire.ErrUnavailable.
var ErrCredentials = wire.ErrCredentials

// AuthConfig is how the gateway authenticates to one backend with OAuth. The client's own token
// is never sent to a backend (docs/protocol.md §4: no token passthrough).
type AuthConfig struct {
	// Type is AuthClientCredentials, AuthTokenExchange or AuthUserOAuth; empty means no OAuth
	// (static Headers only).
	Type string `yaml:"type"`
	// AuthServer is, for AuthUserOAuth, the issuer of the backend's authorization server.
	// Default: the one its protected resource metadata (RFC 9728) names. Required with a
	// clientSecret: the secret goes to this server alone, never to one the backend names.
	AuthServer string `yaml:"authServer"`
	// Registration is, for AuthUserOAuth, how the gateway is a client of that server: static
	// (the default: ClientID and ClientSecret), metadataDocument (a Client ID Metadata
	// Document the gateway serves) or dynamic (RFC 7591).
	Registration string `yaml:"registration"`
	// TokenURL is the authorization server's token endpoint: https, or http on a loopback host.
	TokenURL string `yaml:"tokenURL"`
	// ClientID is the gateway's client id at the authorization server.
	ClientID string `yaml:"clientID"`
	// ClientSecret is the client secret, already resolved by the caller from a file or the
	// environment; sent with client_secret_basic and never logged. Not read from YAML: the
	// caller's configuration gives it as a secret reference. For AuthUserOAuth, optional (a
	// public client has none) and only with AuthServer.
	ClientSecret string `yaml:"-"`
	// Scopes are requested as the space-separated scope parameter. Optional.
	Scopes []string `yaml:"scopes"`
	// Audience is sent as the audience parameter (RFC 8693 §2.1): the logical name of the
	// backend. Optional.
	Audience string `yaml:"audience"`
	// Resource is sent as the resource parameter (RFC 8707): the backend's URI. Optional.
	Resource string `yaml:"resource"`
	// SubjectIssuers are, for AuthTokenExchange, the issuers whose callers' tokens may be
	// exchanged at TokenURL: a caller of any other issuer is refused before its token is sent
	// anywhere. Required (the gateway fills in its issuer when it has only one).
	SubjectIssuers []string `yaml:"subjectIssuers"`
	// Timeout bounds one token request. Zero means DefaultTokenTimeout.
	Timeout time.Duration `yaml:"timeout"`
	// RefreshBefore is how long before expiry a cached token is replaced. Zero means
	// DefaultTokenRefreshBefore; it never exceeds half the token's lifetime.
	RefreshBefore time.Duration `yaml:"refreshBefore"`
	// MaxCachedTokens bounds the exchanged-token cache. Zero means DefaultMaxExchangedTokens.
	MaxCachedTokens int `yaml:"maxCachedTokens"`
	// MaxLegacySessions bounds, for a token-exchange backend that speaks a pre-2026 revision,
	// the callers holding a session of their own with it in one replica (one session each).
	// Zero means DefaultMaxLegacySessions.
	MaxLegacySessions int `yaml:"maxLegacySessions"`
	// LegacySessionIdle is how long such a caller's session may go unused before it is
	// closed. Zero means DefaultLegacySessionIdle.
	LegacySessionIdle time.Duration `yaml:"legacySessionIdle"`
}

func (a *AuthConfig) validate(headers map[string]string) []error {
	if a.Type == "" {
		return nil
	}
	if a.Type == AuthUserOAuth {
		return a.validateUserOAuth(headers)
	}
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if a.Type != AuthClientCredentials && a.Type != AuthTokenExchange {
		add("type", "%q: want %s, %s or %s", a.Type, AuthClientCredentials, AuthTokenExchange, AuthUserOAuth)
	}
	if a.AuthServer != "" || a.Registration != "" {
		add("authServer", "authServer and registration apply to type %s only", AuthUserOAuth)
	}
	if err := validateTokenURL(a.TokenURL); err != nil {
		add("tokenURL", "%v", err)
	}
	if a.ClientID == "" {
		add("clientID", "required")
	}
	if a.ClientSecret == "" {
		add("clientSecret", "required")
	}
	if strings.ContainsAny(a.ClientID, "\r\n\x00") {
		add("clientID", "has a control character (CR, LF or NUL)")
	}
	if strings.ContainsAny(a.ClientSecret, "\r\n\x00") {
		add("clientSecret", "the value has a control character (CR, LF or NUL)")
	}
	for _, f := range []struct {
		key string
		neg bool
	}{{"timeout", a.Timeout < 0}, {"refreshBefore", a.RefreshBefore < 0}, {"maxCachedTokens", a.MaxCachedTokens < 0},
		{"maxLegacySessions", a.MaxLegacySessions < 0}, {"legacySessionIdle", a.LegacySessionIdle < 0}} {
		if f.neg {
			add(f.key, "must not be negative")
		}
	}
	errs = append(errs, a.validateSubjectIssuers()...)
	if a.Type != AuthTokenExchange && (a.MaxLegacySessions != 0 || a.LegacySessionIdle != 0) {
		add("maxLegacySessions", "maxLegacySessions and legacySessionIdle apply to type tokenExchange only")
	}
	if hasHeader(headers, "Authorization") {
		add("", "auth and an Authorization header exclude each other")
	}
	return errs
}

// validateTokenURL refuses to send a client secret in clear text except on loopback.
func validateTokenURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Fragment != "" {
		return errors.New("want an absolute URL without fragment")
	}
	if u.Scheme == "https" {
		return nil
	}
	if u.Scheme == "http" && loopback.Host(u.Hostname()) {
		return nil
	}
	return errors.New("want https (http only on a loopback host): the client secret travels in it")
}

// token is one access token and when it stops being used.
type token struct {
	value   string
	refresh time.Time // replace from here on
	expires time.Time // unusable from here on
}

// credentials obtains a backend's tokens. Tokens are fetched with singleflight, so a burst of
// calls after expiry makes one token request; the fetch runs on its own context bounded by the
// token timeout, so a caller that goes away does not fail the others waiting for it.
type credentials struct {
	cfg    AuthConfig
	name   string
	client *http.Client
	now    func() time.Time
	flight singleflight.Group
	own    tokenCache // the client-credentials token, under key ""
	subj   tokenCache // exchanged tokens by digest of the caller's token
	// beforeFlight, when set (tests only), runs after a cache miss and before the flight.
	beforeFlight func()
}

func newCredentials(name string, cfg AuthConfig, rt http.RoundTripper, now func() time.Time) *credentials {
	if cfg.Type == "" {
		return nil
	}
	cfg.Timeout = orDuration(cfg.Timeout, DefaultTokenTimeout)
	cfg.RefreshBefore = orDuration(cfg.RefreshBefore, DefaultTokenRefreshBefore)
	if cfg.MaxCachedTokens == 0 {
		cfg.MaxCachedTokens = DefaultMaxExchangedTokens
	}
	if rt == nil {
		rt = &http.Transport{
			DialContext:         (&net.Dialer{Timeout: DefaultConnectTimeout, KeepAlive: tcpKeepAlive}).DialContext,
			ForceAttemptHTTP2:   true,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     DefaultIdleConnTimeout,
			TLSHandshakeTimeout: DefaultConnectTimeout,
			// A token endpoint's headers are bounded as a backend's are (configureTransport).
			MaxResponseHeaderBytes: direct.MaxResponseHeaderBytes,
		}
	}
	return &credentials{cfg: cfg, name: name, now: now,
		client: &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		own:    tokenCache{max: 1},
		subj:   tokenCache{max: cfg.MaxCachedTokens},
	}
}

// authorization returns the Authorization value for one backend request. subject is the
// caller's verified token; fromCaller says the request serves a caller (tools/call, lists), as opposed
// to the gateway's own discover, probe and listen requests, which authenticate as the gateway
// itself with the client credentials grant.
// key is SubjectKey(subject) when the caller has it, else "".
func (c *credentials) authorization(ctx context.Context, subject, key string, fromCaller bool) (string, error) {
	if c.cfg.Type == AuthUserOAuth {
		// A pre-2026 backend's session is not per caller at a per-user backend: fail closed
		// rather than share one caller's token in another's session.
		return "", fmt.Errorf("%w: %w: %s: per-user OAuth to a backend that speaks a pre-2026 revision is not supported", wire.ErrUnavailable, ErrCredentials, c.name)
	}
	if c.cfg.Type == AuthClientCredentials || (!fromCaller && subject == "") {
		return c.get(ctx, &c.own, "", "")
	}
	if subject == "" {
		return "", fmt.Errorf("%w: %w: %s: no caller token to exchange", wire.ErrUnavailable, ErrCredentials, c.name)
	}
	if key == "" {
		key = SubjectKey(subject)
	}
	return c.get(ctx, &c.subj, key, subject)
}

// get returns a cached token or fetches one; key "" is the gateway's own token.
func (c *credentials) get(ctx context.Context, cache *tokenCache, key, subject string) (string, error) {
	now := c.now()
	t, ok := cache.get(key)
	if ok && now.Before(t.refresh) {
		return "Bearer " + t.value, nil
	}
	if c.beforeFlight != nil {
		c.beforeFlight()
	}
	ch := c.flight.DoChan(key, func() (any, error) {
		// A flight that ended between this caller's miss and its DoChan has cached a fresh
		// token: use it rather than make a second request.
		if t, ok := cache.get(key); ok && c.now().Before(t.refresh) {
			return t, nil
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.Timeout)
		defer cancel()
		nt, err := c.fetch(fctx, subject)
		if err == nil {
			cache.put(key, nt, c.now())
		}
		return nt, err
	})
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			if ok && now.Before(t.expires) {
				return "Bearer " + t.value, nil // refresh failed early: the old token still works
			}
			return "", res.Err
		}
		return "Bearer " + res.Val.(*token).value, nil
	}
}

// fetch performs one grant at the token endpoint.
func (c *credentials) fetch(ctx context.Context, subject string) (*token, error) {
	form := url.Values{}
	if subject == "" {
		form.Set("grant_type", "client_credentials")
	} else {
		form.Set("grant_type", grantTokenExchange)
		form.Set("subject_token", subject)
		form.Set("subject_token_type", tokenTypeAccessToken)
		form.Set("requested_token_type", tokenTypeAccessToken)
	}
	if len(c.cfg.Scopes) > 0 {
		form.Set("scope", strings.Join(c.cfg.Scopes, " "))
	}
	if c.cfg.Audience != "" {
		form.Set("audience", c.cfg.Audience)
	}
	if c.cfg.Resource != "" {
		form.Set("resource", c.cfg.Resource)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, c.fail("building the request")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 §2.3.1: id and secret are form-encoded before Basic encoding.
	req.SetBasicAuth(url.QueryEscape(c.cfg.ClientID), url.QueryEscape(c.cfg.ClientSecret))
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, c.fail("token endpoint unreachable")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponseBytes+1))
	if err != nil || len(body) > maxTokenResponseBytes {
		return nil, c.fail("token response unreadable or too large")
	}
	t, err := c.parse(resp.StatusCode, body)
	if err == nil && subject != "" && t.value == subject {
		// A token service that passes the caller's token through would have the gateway
		// send it to the backend, which never receives a caller's token.
		return nil, c.fail("token exchange answered with the caller's own token")
	}
	return t, err
}

// parse reads a token response (RFC 6749 §5.1, RFC 8693 §2.2.1). Only the OAuth error code is
// reported, never the body, which could echo a secret.
func (c *credentials) parse(status int, body []byte) (*token, error) {
	var w struct {
		AccessToken     string          `json:"access_token"`
		TokenType       string          `json:"token_type"`
		ExpiresIn       json.RawMessage `json:"expires_in"`
		IssuedTokenType string          `json:"issued_token_type"`
		Error           string          `json:"error"`
	}
	if json.Unmarshal(body, &w) != nil {
		return nil, c.fail(fmt.Sprintf("token endpoint answered HTTP %d without a JSON body", status))
	}
	if status != http.StatusOK || w.Error != "" {
		return nil, c.fail(fmt.Sprintf("token endpoint answered HTTP %d, error %q", status, oauthErrorCode(w.Error)))
	}
	if w.AccessToken == "" || !strings.EqualFold(w.TokenType, "Bearer") || strings.ContainsAny(w.AccessToken, " \r\n\x00") {
		return nil, c.fail("token response lacks a Bearer access_token")
	}
	if w.IssuedTokenType != "" && w.IssuedTokenType != tokenTypeAccessToken {
		return nil, c.fail("token exchange issued something other than an access token")
	}
	life, ok := expiresin.Parse(w.ExpiresIn)
	if !ok {
		life = DefaultTokenLifetime
	}
	now := c.now()
	return &token{value: w.AccessToken, expires: now.Add(life),
		refresh: now.Add(life - min(c.cfg.RefreshBefore, life/2))}, nil
}

// oauthErrorCode keeps an error code only when it looks like one (RFC 6749 §5.2 charset), so
// a hostile endpoint cannot put arbitrary text into the logs.
func oauthErrorCode(s string) string {
	if len(s) > 64 || strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r > 0x7e || r == '"' || r == '\\' }) >= 0 {
		return "invalid"
	}
	return s
}

func (c *credentials) fail(why string) error {
	return fmt.Errorf("%w: %w: %s: %s", wire.ErrUnavailable, ErrCredentials, c.name, why)
}

// tokenCache holds tokens by key, at most max of them.
type tokenCache struct {
	max int
	mu  sync.Mutex
	m   map[string]*token
}

func (c *tokenCache) get(key string) (*token, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[key]
	return t, ok
}

// put stores t; when full it first drops expired tokens, then the one expiring soonest. The
// scan is linear but runs only when a new key arrives at a full cache.
func (c *tokenCache) put(key string, t *token, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]*token)
	}
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		var victim string
		var soonest *token
		for k, v := range c.m {
			if !now.Before(v.expires) {
				delete(c.m, k)
			} else if soonest == nil || v.expires.Before(soonest.expires) {
				victim, soonest = k, v
			}
		}
		if len(c.m) >= c.max {
			delete(c.m, victim)
		}
	}
	c.m[key] = t
}

// close releases the token endpoint's idle connections.
func (c *credentials) close() {
	if c != nil {
		c.client.CloseIdleConnections()
	}
}

// ProbeOwnToken fetches the gateway's own client-credentials token for b, as its first request
// would, for operator tooling (check-config --online) checking an endpoint it may send nothing
// else (a webhook). It reports false when b has no client credentials to check. It is a
// function, not a method: operator tooling is no part of what a Backend serves.
func ProbeOwnToken(ctx context.Context, b *Backend) (bool, error) {
	if b.creds == nil || b.creds.cfg.Type != AuthClientCredentials {
		return false, nil
	}
	_, err := b.creds.authorization(ctx, "", "", false)
	return true, err
}
