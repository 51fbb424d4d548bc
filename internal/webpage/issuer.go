package webpage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/egress"
)

// Bounds on reaching the issuer for sign-ins. They match token verification's defaults
// (authz.DefaultDiscoveryRetryInterval, authz.DefaultFetchTimeout).
const (
	// issuerRetryInterval is the least time between two failed discoveries: while the issuer
	// is down, sign-ins are refused at once instead of each waiting for it.
	issuerRetryInterval = 5 * time.Second
	// discoveryTimeout bounds one discovery request.
	discoveryTimeout = 5 * time.Second
)

// issuer is the pages' view of its OpenID provider: discovered once and kept, by one request
// at a time whatever the number of sign-ins waiting for it (single flight), and after a failure
// not asked again for issuerRetryInterval, so an outage of the provider neither queues
// sign-ins behind each other nor multiplies requests to it.
type issuer struct {
	url    string
	client *http.Client
	now    func() time.Time

	// public: the gateway has no client secret, so it names itself in the token request's body.
	public bool

	group    singleflight.Group
	mu       sync.Mutex
	provider *oidc.Provider
	endpoint oauth2.Endpoint
	failedAt time.Time
	lastErr  error
	// beforeFlight, when set (tests only), runs after get found no provider and before the
	// flight.
	beforeFlight func()
}

// provided is what discovery yields: the provider and its endpoints, with the client
// authentication the provider's metadata asks for.
type provided struct {
	provider *oidc.Provider
	endpoint oauth2.Endpoint
}

// UnreachableError says the issuer cannot be reached and when the sign-in will try it again.
type UnreachableError struct {
	err error
	// RetryAfter is when the issuer will be tried again.
	RetryAfter time.Duration
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("sign-in: issuer unreachable (next attempt in %s): %v", e.RetryAfter.Round(time.Second), e.err)
}

func (e *UnreachableError) Unwrap() error { return e.err }

// get returns the discovered provider, discovering it if needed; an error is an
// *UnreachableError.
func (is *issuer) get(ctx context.Context) (provided, error) {
	if p, err := is.known(); p.provider != nil || err != nil {
		return p, err
	}
	if is.beforeFlight != nil {
		is.beforeFlight()
	}
	ch := is.group.DoChan("discover", func() (any, error) {
		// A flight that ended between this caller's look and its DoChan has kept a provider
		// or a failure: discovering again would ask a down issuer sooner than
		// issuerRetryInterval.
		if p, err := is.known(); p.provider != nil || err != nil {
			return p, err
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), discoveryTimeout)
		defer cancel()
		p, err := oidc.NewProvider(oidc.ClientContext(dctx, is.client), is.url)
		if err == nil {
			err = endpointsNamed(is.url, p)
		}
		// Logged with the page's refusal: a redirect's target, query and all, is the server's.
		err = configerr.Redact(err)
		is.mu.Lock()
		defer is.mu.Unlock()
		if err != nil {
			is.failedAt, is.lastErr = is.now(), err
			return nil, err
		}
		is.provider, is.endpoint = p, p.Endpoint()
		is.endpoint.AuthStyle = authStyle(p, is.public)
		return provided{is.provider, is.endpoint}, nil
	})
	select {
	case <-ctx.Done():
		return provided{}, &UnreachableError{err: ctx.Err(), RetryAfter: issuerRetryInterval}
	case res := <-ch:
		if ue, ok := res.Err.(*UnreachableError); ok {
			return provided{}, ue // an earlier flight's failure, within its retry interval
		}
		if res.Err != nil {
			return provided{}, &UnreachableError{err: res.Err, RetryAfter: issuerRetryInterval}
		}
		return res.Val.(provided), nil
	}
}

// known is the discovered provider, or the failure of a discovery within issuerRetryInterval;
// neither when discovery is to run.
func (is *issuer) known() (provided, error) {
	is.mu.Lock()
	p, failedAt, lastErr := provided{is.provider, is.endpoint}, is.failedAt, is.lastErr
	is.mu.Unlock()
	if p.provider != nil {
		return p, nil
	}
	if wait := issuerRetryInterval - is.now().Sub(failedAt); !failedAt.IsZero() && wait > 0 {
		return provided{}, &UnreachableError{err: lastErr, RetryAfter: wait}
	}
	return provided{}, nil
}

// endpointsNamed judges the endpoints p's discovery document names as URLs the issuer names
// (egress.Named): the token endpoint (which receives the code and client secret) and the key
// set, which the gateway itself goes to, so that an issuer elsewhere cannot send them to this
// machine's loopback or the cloud metadata service (what their names resolve to is judged when
// dialled, issuerClient); and the authorization endpoint, where the browser is sent with the
// sign-in's state, nonce and PKCE challenge, which must be there and absolute, https (http only
// on a loopback host), as a per-user OAuth backend's authorization server's must: an empty or
// relative one sent the browser back to the gateway's own page, round after round.
func endpointsNamed(issuerURL string, p *oidc.Provider) error {
	var meta struct {
		JWKSURI string `json:"jwks_uri"`
	}
	_ = p.Claims(&meta)
	e := p.Endpoint()
	if e.AuthURL == "" || e.TokenURL == "" {
		return errors.New("the discovery document names no authorization_endpoint or no token_endpoint")
	}
	for _, u := range []string{e.AuthURL, e.TokenURL, meta.JWKSURI} {
		if u == "" {
			continue
		}
		if err := egress.Named(issuerURL, u); err != nil {
			return fmt.Errorf("the discovery document: %w", err)
		}
	}
	return nil
}

// issuerClient reaches the sign-in issuer: its host is the operator's, and every endpoint its
// discovery document names, every redirect and every address a name resolves to is judged by
// internal/egress, and every answer is bounded (boundedTransport). d dials; nil is egress's
// default dialer.
func issuerClient(issuerURL string, d *net.Dialer) *http.Client {
	p := &egress.Policy{Hosts: egress.HostsOf(issuerURL)}
	return &http.Client{Timeout: 10 * time.Second, Transport: boundedTransport{p.Transport(d)}, CheckRedirect: egress.CheckRedirect}
}

// authStyle is how the gateway authenticates at the token endpoint, from the provider's
// token_endpoint_auth_methods_supported (OpenID Connect Discovery §3; absent means
// client_secret_basic). Left to the oauth2 package, the style is guessed: a refused code is
// sent again in the other style, two token requests for every junk code.
func authStyle(p *oidc.Provider, public bool) oauth2.AuthStyle {
	if public {
		return oauth2.AuthStyleInParams
	}
	var meta struct {
		Methods []string `json:"token_endpoint_auth_methods_supported"`
	}
	_ = p.Claims(&meta)
	if !slices.Contains(meta.Methods, "client_secret_basic") && slices.Contains(meta.Methods, "client_secret_post") {
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleInHeader
}

// ProbeSignIn discovers issuerURL as the first sign-in would (OpenID Connect discovery with the
// client a sign-in uses by default) and returns its authorization and token endpoints, for
// operator tooling (check-config --online). Whether the client id and secret are accepted shows
// only when a person signs in: nothing is sent to the token endpoint.
func ProbeSignIn(ctx context.Context, issuerURL string) (authURL, tokenURL string, err error) {
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, issuerClient(issuerURL, nil)), issuerURL)
	if err != nil {
		return "", "", err
	}
	if err := endpointsNamed(issuerURL, p); err != nil {
		return "", "", err
	}
	return p.Endpoint().AuthURL, p.Endpoint().TokenURL, nil
}
