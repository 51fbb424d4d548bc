package authz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"

	"github.com/mcp-gateway/gateway/internal/egress"
)

// discoveryPath is where an issuer publishes its discovery document (OIDC Discovery §4).
const discoveryPath = "/.well-known/openid-configuration"

// oauthMetadataPath is where an authorization server publishes its RFC 8414 metadata, between
// the host and the issuer's path (RFC 8414 §3.1).
const oauthMetadataPath = "/.well-known/oauth-authorization-server"

// Failures of discovery, each its own FetchErrorClass.
var (
	errNoJWKSURI      = errors.New("discovery document has no jwks_uri")
	errBadDocument    = errors.New("malformed discovery document or key set")
	errIssuerMismatch = errors.New("discovery document is for another issuer")
)

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
	// life ends (end) when the last Authenticator using the issuer is closed: its fetches,
	// detached from their callers, end with it.
	life context.Context
	end  context.CancelFunc
	// settings decide whether a reloaded configuration may take this issuer over as it is.
	settings issuerSettings

	group    singleflight.Group
	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	keys     *keySet // the verifier's key set, nil until discovery succeeded
	failedAt time.Time
	lastErr  error
	keyErr   error // the last failure of fetchKeys (keystatus.go)
	users    int   // the Authenticators using the issuer (a reload takes it over)
	// followers are older key sets of the issuer waiting for keys to follow (keyfollow.go):
	// handed to the key set install makes.
	followers []*keySet
	// beforeFlight, when set (tests only), runs after ready found no verifier and before the
	// flight.
	beforeFlight func()
}

// issuerSettings are what an issuer's behaviour depends on besides its URL.
type issuerSettings struct {
	jwksURL                              string
	audiences, algs                      []string
	skew, retryEvery, minRefresh, maxAge time.Duration
	timeout                              time.Duration
	client                               *http.Client // as given in Options; nil for the default
}

func (s issuerSettings) equal(o issuerSettings) bool {
	return s.jwksURL == o.jwksURL && slices.Equal(s.audiences, o.audiences) && slices.Equal(s.algs, o.algs) &&
		s.skew == o.skew && s.retryEvery == o.retryEvery && s.minRefresh == o.minRefresh && s.maxAge == o.maxAge &&
		s.timeout == o.timeout && s.client == o.client
}

func (is *issuer) install(jwksURL string) *oidc.IDTokenVerifier {
	// Audience and time are checked by Authenticate: go-oidc takes a single
	// ClientID and hard-codes a 5-minute nbf leeway, while RFC 8707 needs a
	// set of audiences and the skew must follow configuration and the clock.
	ks := is.newKeySet(jwksURL)
	v := oidc.NewVerifier(is.name, ks, &oidc.Config{
		SupportedSigningAlgs: is.algList,
		SkipClientIDCheck:    true,
		SkipExpiryCheck:      true,
		Now:                  is.now,
	})
	is.mu.Lock()
	defer is.mu.Unlock()
	ks.followers, is.followers = is.followers, nil // ks is not shared yet
	is.verifier, is.keys = v, ks
	return v
}

// settled returns the verifier, or the error of a discovery failure still within retryEvery;
// both nil when discovery is to run.
func (is *issuer) settled() (*oidc.IDTokenVerifier, error) {
	is.mu.Lock()
	v, failedAt, lastErr := is.verifier, is.failedAt, is.lastErr
	is.mu.Unlock()
	if v != nil {
		return v, nil
	}
	if wait := is.retryEvery - is.now().Sub(failedAt); !failedAt.IsZero() && wait > 0 {
		return nil, &unavailableError{msg: "discovery of " + is.name + " failed recently", err: lastErr, retryAfter: wait}
	}
	return nil, nil
}

// ready returns the verifier, running discovery if needed.
func (is *issuer) ready(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	if v, err := is.settled(); v != nil || err != nil {
		return v, err
	}
	if is.beforeFlight != nil {
		is.beforeFlight()
	}
	ch := is.group.DoChan("discover", func() (any, error) {
		// A flight that ended between this caller's look and its DoChan has installed a
		// verifier or recorded a failure: discovering again would ask the issuer more often
		// than retryEvery allows.
		if v, err := is.settled(); v != nil || err != nil {
			return v, err
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), is.timeout)
		defer cancel()
		defer context.AfterFunc(is.life, cancel)()
		jwksURL, err := discover(dctx, is.client, is.name)
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
		if ue, ok := res.Err.(*unavailableError); ok {
			return nil, ue // the backoff of an earlier flight's failure
		}
		if res.Err != nil {
			return nil, &unavailableError{msg: "discovery of " + is.name + " failed", err: res.Err, retryAfter: is.retryEvery}
		}
		return res.Val.(*oidc.IDTokenVerifier), nil
	}
}

// discover fetches the OIDC discovery document (OIDC Discovery §4) and returns its jwks_uri;
// where that document is not found (404), the RFC 8414 authorization server metadata, which
// names jwks_uri and issuer alike: MCP has an authorization server publish one of the two, and
// one that publishes only RFC 8414 metadata had its every token answered 503. Any other failure
// of the discovery document is not taken for its absence. The "issuer" must equal the configured
// one exactly (OIDC Discovery §4.3, RFC 8414 §3.3), as go-oidc's NewProvider checks; the document
// is read here, bounded like a key set, so that a failure keeps its type (an HTTP status, a bad
// document, a mismatch) for the readiness report and the log.
func discover(ctx context.Context, client *http.Client, issuerURL string) (string, error) {
	body, err := getJSON(ctx, client, strings.TrimSuffix(issuerURL, "/")+discoveryPath)
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusNotFound {
		var oauthErr error
		if body, oauthErr = getJSON(ctx, client, oauthMetadataURL(issuerURL)); oauthErr != nil {
			return "", fmt.Errorf("%w; %w", err, oauthErr)
		}
		err = nil
	}
	if err != nil {
		return "", err
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", fmt.Errorf("%w: %w", errBadDocument, err)
	}
	if doc.Issuer != issuerURL {
		return "", fmt.Errorf("%w: the document names %q", errIssuerMismatch, doc.Issuer)
	}
	if doc.JWKSURI == "" {
		return "", errNoJWKSURI
	}
	if err := checkURL(doc.JWKSURI); err != nil {
		return "", fmt.Errorf("%w: jwks_uri: %w", errBadDocument, err)
	}
	// The key set is fetched where the issuer's document says: judged as a URL the issuer
	// names, as per-user OAuth judges an authorization server's endpoints.
	if err := egress.Named(issuerURL, doc.JWKSURI); err != nil {
		return "", fmt.Errorf("jwks_uri: %w", err)
	}
	return doc.JWKSURI, nil
}

// oauthMetadataURL is the RFC 8414 §3.1 metadata URL of issuerURL (validated: absolute, without
// query or fragment): the well-known path inserted between the host and the issuer's path.
func oauthMetadataURL(issuerURL string) string {
	u, err := url.Parse(issuerURL)
	if err != nil {
		return strings.TrimSuffix(issuerURL, "/") + oauthMetadataPath
	}
	path := u.EscapedPath()
	if path == "/" {
		path = "" // RFC 8414 §3.1: a terminating "/" after the host is removed
	}
	return u.Scheme + "://" + u.Host + oauthMetadataPath + path
}

func signatureAlgs(names []string) []jose.SignatureAlgorithm {
	out := make([]jose.SignatureAlgorithm, len(names))
	for i, n := range names {
		out[i] = jose.SignatureAlgorithm(n)
	}
	return out
}
