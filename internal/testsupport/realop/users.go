package realop

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	exstorage "github.com/zitadel/oidc/v3/example/server/storage"
	zoidc "github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2"
)

// The example's users, who sign in on its login page (/login/username) with a password.
const (
	// UserID is the subject ("sub") of the first example user.
	UserID = "id1"
	// OtherUserID is the subject of the second example user.
	OtherUserID = "id2"
	// OtherUsername is the second user's login name.
	OtherUsername = "test-user2"
	// UserPassword is both users' password.
	UserPassword = "verysecure"
	// UserClientID is the public client UserToken signs in with; its access tokens are JWTs
	// whose "aud" is this client id.
	UserClientID = "mcp-user-client"
	// userRedirect is where UserToken's authorization response goes; nothing listens there,
	// the code is read from the redirect itself.
	userRedirect = "http://127.0.0.1/callback"
)

// Username is the first example user's login name, which the example derives from the
// issuer's host.
func (p *Provider) Username() string {
	u, _ := url.Parse(p.issuer)
	return "test-user@" + u.Hostname()
}

// extraClient is a client registered after start, with its secret ("" for a public client).
type extraClient struct {
	client *exstorage.Client
	secret string
	// jwt makes its access tokens JWTs; public makes it a public client (PKCE only).
	jwt, public bool
}

// AddWebClient registers a confidential client (client_secret_basic, authorization code with
// PKCE allowed) that may redirect to redirectURIs, such as a relying party under test.
func (p *Provider) AddWebClient(id, secret string, redirectURIs ...string) {
	p.store.add(id, extraClient{client: exstorage.WebClient(id, secret, redirectURIs...), secret: secret})
}

func (s *storage) add(id string, c extraClient) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extra[id] = c
}

func (s *storage) lookup(id string) (extraClient, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.extra[id]
	return c, ok
}

// GetClientByClientID serves the clients added after start before the example's own.
func (s *storage) GetClientByClientID(ctx context.Context, clientID string) (op.Client, error) {
	if c, ok := s.lookup(clientID); ok {
		return c.op(clientID == UserClientID), nil
	}
	if c, ok, err := s.metadataDocumentClient(ctx, clientID); ok || err != nil {
		return c, err
	}
	c, err := s.Storage.GetClientByClientID(ctx, clientID)
	if err != nil {
		// Unknown (removed, or never registered): invalid_client, as RFC 6749 §5.2 says,
		// not the example's server_error.
		return nil, zoidc.ErrInvalidClient().WithDescription("client not found")
	}
	return c, nil
}

// op is c as the provider sees it.
func (c extraClient) op(jwt bool) op.Client {
	var oc op.Client = exstorage.RedirectGlobsClient(c.client)
	if c.public {
		oc = publicClient{oc}
	}
	if jwt || c.jwt {
		oc = jwtClient{oc}
	}
	return oc
}

// AddJWTWebClient is AddWebClient for a client whose access tokens are JWTs, which a resource
// server verifies on its own (go-oidc against the provider's keys): the client of a backend's
// authorization server that the gateway is for its users.
func (p *Provider) AddJWTWebClient(id, secret string, redirectURIs ...string) {
	p.store.add(id, extraClient{client: exstorage.WebClient(id, secret, redirectURIs...), secret: secret, jwt: true})
}

// EndSessions ends every session of user userID at client clientID: its access and refresh
// tokens are removed, as when the user revokes an application's access at the provider. A
// refresh with one of them is then refused with invalid_grant, as an expired one is.
func (p *Provider) EndSessions(ctx context.Context, userID, clientID string) error {
	return p.store.TerminateSession(ctx, userID, clientID)
}

// RemoveClient removes a client added or registered: the provider no longer knows it, as when
// an authorization server cleans up dynamically registered clients.
func (p *Provider) RemoveClient(id string) {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	delete(p.store.extra, id)
}

// AuthorizeClientIDSecret checks the added clients' secrets, then the example's.
func (s *storage) AuthorizeClientIDSecret(ctx context.Context, clientID, clientSecret string) error {
	if c, ok := s.lookup(clientID); ok {
		if c.secret == "" || c.secret != clientSecret {
			return errors.New("invalid client secret")
		}
		return nil
	}
	return s.Storage.AuthorizeClientIDSecret(ctx, clientID, clientSecret)
}

// UserToken signs username in through the provider's own login page over plain HTTP — the
// authorization code flow with PKCE, as a native application would run it — and returns the
// JWT access token issued to UserClientID for that user.
func (p *Provider) UserToken(ctx context.Context, username, password string) (string, error) {
	if _, ok := p.store.lookup(UserClientID); !ok {
		c := exstorage.NativeClient(UserClientID, userRedirect)
		p.store.add(UserClientID, extraClient{client: c})
	}
	ctx = oidc.ClientContext(ctx, p.client)
	disc, err := oidc.NewProvider(ctx, p.issuer)
	if err != nil {
		return "", fmt.Errorf("%w: discovery: %w", ErrTokenRequest, err)
	}
	conf := oauth2.Config{ClientID: UserClientID, Endpoint: disc.Endpoint(), RedirectURL: userRedirect,
		Scopes: []string{oidc.ScopeOpenID}}
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	jar, _ := cookiejar.New(nil)
	var code string
	hc := &http.Client{Timeout: DefaultHTTPTimeout, Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), userRedirect) {
			if r.URL.Query().Get("state") == state {
				code = r.URL.Query().Get("code")
			}
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := hc.Get(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		return "", fmt.Errorf("%w: authorize: %w", ErrTokenRequest, err)
	}
	_ = resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		return "", fmt.Errorf("%w: no login page (status %d)", ErrTokenRequest, resp.StatusCode)
	}
	login := resp.Request.URL.ResolveReference(&url.URL{Path: "/login/username"})
	resp, err = hc.PostForm(login.String(), url.Values{"id": {id}, "username": {username}, "password": {password}})
	if err != nil {
		return "", fmt.Errorf("%w: login: %w", ErrTokenRequest, err)
	}
	_ = resp.Body.Close()
	if code == "" {
		return "", fmt.Errorf("%w: login refused (status %d)", ErrTokenRequest, resp.StatusCode)
	}
	tok, err := conf.Exchange(context.WithValue(ctx, oauth2.HTTPClient, p.client), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrTokenRequest, err)
	}
	return tok.AccessToken, nil
}
