// Package realop runs a real OpenID provider that this project did not
// write — the example OP of github.com/zitadel/oidc/v3 — in-process on a
// loopback listener, so tests can prove that the gateway's token
// verification interoperates with an independent implementation of
// discovery, JWKS, client authentication and JWT access tokens.
//
// It is for tests only. The provider keeps its keys and clients in memory
// and its example clients have well-known secrets.
package realop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	exstorage "github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The service user that the example storage registers for the
// client-credentials grant. Its tokens carry sub and client_id equal to
// ServiceClientID and, unless Options.Audience says otherwise, aud equal
// to ServiceClientID too.
const (
	// ServiceClientID is the example's client-credentials client id.
	ServiceClientID = "sid1"
	// ServiceClientSecret is that client's secret.
	ServiceClientSecret = "verysecret"
)

// DefaultHTTPTimeout bounds each token request made by Provider.Token.
const DefaultHTTPTimeout = 10 * time.Second

// ErrTokenRequest wraps every failure of Provider.Token.
var ErrTokenRequest = errors.New("realop: token request failed")

// Options configure Start.
type Options struct {
	// Audience, when set, replaces the "aud" of client-credentials access
	// tokens. Empty: the example's own choice, the client id. A real
	// deployment configures the audience at the provider (RFC 8707); the
	// example hard-codes it, so the only way to set it is to wrap its
	// storage, which is what this does.
	Audience string
	// AuthServer turns on what the example OP lacks as the authorization server of a
	// third-party backend (authserver.go): RFC 9207 iss in authorization responses, RFC 7591
	// registration, Client ID Metadata Documents. The zero value turns on none.
	AuthServer AuthServerOptions
	// Observe, when set, is called with every request the provider receives, before it is
	// served (tests count token requests with it).
	Observe func(r *http.Request)
	// Listener, when set, is where the provider listens (its address makes the issuer)
	// instead of a new one on 127.0.0.1:0: a test that owns it can make the provider
	// unreachable, hang or answer garbage, and bring it back at the same issuer.
	Listener net.Listener
	// AccessTokenLifetime, when set, shortens the lifetime of the JWT access tokens the
	// provider issues (the example's is five minutes), so a test can see one expire.
	AccessTokenLifetime time.Duration
}

// Provider is a running example OP. It stops when the test that started
// it ends.
type Provider struct {
	issuer string
	client *http.Client
	store  *storage
}

// Start serves the zitadel example OP (exampleop.SetupServer over its
// in-memory storage) on 127.0.0.1 with issuer http://127.0.0.1:PORT/ and
// makes its client-credentials client issue JWT access tokens rather than
// the example's default opaque ones. It registers shutdown with tb.Cleanup.
func Start(tb testing.TB, opts Options) *Provider {
	tb.Helper()
	srv := httptest.NewUnstartedServer(nil) // listens on 127.0.0.1:0 already
	if opts.Listener != nil {
		_ = srv.Listener.Close()
		srv.Listener = opts.Listener
	}
	issuer := "http://" + srv.Listener.Addr().String() + "/"
	store := &storage{
		Storage:  exstorage.NewStorage(exstorage.NewUserStore(issuer)),
		audience: opts.Audience,
		extra:    map[string]extraClient{},
		cimd:     opts.AuthServer.MetadataDocuments,
		fetch:    &http.Client{Timeout: DefaultHTTPTimeout},
		lifetime: opts.AccessTokenLifetime,
	}
	// A nil logger keeps SetupServer from replacing the process-wide
	// slog default.
	op := exampleop.SetupServer(issuer, store, nil, false)
	srv.Config.Handler = opts.AuthServer.wrap(op, issuer, store, opts.Observe)
	srv.Start()
	tb.Cleanup(srv.Close)
	return &Provider{issuer: issuer, client: &http.Client{Timeout: DefaultHTTPTimeout}, store: store}
}

// Issuer is the provider's issuer identifier ("iss"), ending in a slash.
func (p *Provider) Issuer() string { return p.issuer }

// Token obtains an access token for the service user over real HTTP: OIDC
// discovery for the token endpoint, then the client-credentials grant
// (RFC 6749 §4.4) with client_secret_basic.
func (p *Provider) Token(ctx context.Context, scopes ...string) (string, error) {
	return p.TokenFor(ctx, ServiceClientID, ServiceClientSecret, scopes...)
}

// TokenFor is Token for any client id and secret, so tests can also see
// the provider refuse bad credentials.
func (p *Provider) TokenFor(ctx context.Context, clientID, secret string, scopes ...string) (string, error) {
	ctx = oidc.ClientContext(ctx, p.client)
	disc, err := oidc.NewProvider(ctx, p.issuer)
	if err != nil {
		return "", fmt.Errorf("%w: discovery: %w", ErrTokenRequest, err)
	}
	cc := clientcredentials.Config{
		ClientID:     clientID,
		ClientSecret: secret,
		TokenURL:     disc.Endpoint().TokenURL,
		Scopes:       scopes,
		AuthStyle:    oauth2.AuthStyleInHeader,
	}
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, p.client))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrTokenRequest, err)
	}
	return tok.AccessToken, nil
}

// storage is the example's in-memory storage with two changes for the
// client-credentials grant: JWT access tokens and, optionally, a
// configured audience. Everything else — client authentication, token
// creation, signing, discovery, JWKS — is the library's and the example's.
type storage struct {
	*exstorage.Storage
	audience string

	mu    sync.Mutex
	extra map[string]extraClient // clients added with AddWebClient, AddJWTWebClient, or registered
	// cimd serves URL client ids from their metadata documents, fetched with fetch.
	cimd  bool
	fetch *http.Client
	// lifetime, when positive, caps the expiry of the access tokens issued.
	lifetime time.Duration
}

// CreateAccessToken is the example's, with the expiry capped by lifetime: the JWT's exp and
// the response's expires_in are made from it.
func (s *storage) CreateAccessToken(ctx context.Context, request op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, request)
	return id, s.capExpiry(exp), err
}

// CreateAccessAndRefreshTokens is the example's, with the access token's expiry capped by
// lifetime.
func (s *storage) CreateAccessAndRefreshTokens(ctx context.Context, request op.TokenRequest, current string) (string, string, time.Time, error) {
	id, refresh, exp, err := s.Storage.CreateAccessAndRefreshTokens(ctx, request, current)
	return id, refresh, s.capExpiry(exp), err
}

func (s *storage) capExpiry(exp time.Time) time.Time {
	if s.lifetime <= 0 {
		return exp
	}
	if capped := time.Now().Add(s.lifetime); capped.Before(exp) {
		return capped
	}
	return exp
}

func (s *storage) ClientCredentials(ctx context.Context, clientID, secret string) (op.Client, error) {
	c, err := s.Storage.ClientCredentials(ctx, clientID, secret)
	if err != nil {
		return nil, err
	}
	return jwtClient{c}, nil
}

func (s *storage) ClientCredentialsTokenRequest(ctx context.Context, clientID string, scopes []string) (op.TokenRequest, error) {
	req, err := s.Storage.ClientCredentialsTokenRequest(ctx, clientID, scopes)
	if err != nil || s.audience == "" {
		return req, err
	}
	return audienceRequest{TokenRequest: req, audience: []string{s.audience}}, nil
}

// jwtClient makes the provider sign a JWT access token (verifiable by a
// resource server on its own) instead of the example's opaque default.
type jwtClient struct{ op.Client }

func (jwtClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

type audienceRequest struct {
	op.TokenRequest
	audience []string
}

func (r audienceRequest) GetAudience() []string { return r.audience }
