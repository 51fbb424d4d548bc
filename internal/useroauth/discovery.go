package useroauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/mcp-gateway/gateway/internal/egress"
)

// Discovery bounds.
const (
	// metadataTTL is how long a backend's discovered metadata is kept: the endpoints of an
	// authorization server rarely move, and a change reaches the gateway within the hour.
	metadataTTL = time.Hour
	// metadataRetry is the least time between two failed discoveries of one backend: while
	// its authorization server is down, consents and refreshes fail at once.
	metadataRetry = 5 * time.Second
	// maxMetadataBytes bounds a metadata document.
	maxMetadataBytes = 64 << 10
)

// ErrAuthServer is an authorization server (or a backend's metadata) that cannot be reached,
// answers garbage, or refuses the gateway as a client: a failure the user cannot fix, which the
// gateway reports as retryable and forwards nothing for.
var ErrAuthServer = errors.New("useroauth: authorization server unavailable")

// asMetadata is what the gateway reads of an authorization server's metadata (RFC 8414, or
// OpenID Connect Discovery 1.0, which shares these members).
type asMetadata struct {
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	RevocationEndpoint    string   `json:"revocation_endpoint"`
	RegistrationEndpoint  string   `json:"registration_endpoint"`
	CodeChallengeMethods  []string `json:"code_challenge_methods_supported"`
	TokenAuthMethods      []string `json:"token_endpoint_auth_methods_supported"`
	RevocationAuthMethods []string `json:"revocation_endpoint_auth_methods_supported"`
	// ISSParameter says the server sends iss in its authorization responses (RFC 9207 §3); the
	// gateway then refuses a response without it.
	ISSParameter bool `json:"authorization_response_iss_parameter_supported"`
	// MetadataDocuments says the server accepts a URL client id (Client ID Metadata Document).
	MetadataDocuments bool `json:"client_id_metadata_document_supported"`
}

// resourceMetadata is what the gateway reads of a backend's protected resource metadata (RFC
// 9728).
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// discovered is a backend's authorization server as the gateway uses it.
type discovered struct {
	as     asMetadata
	scopes []string
}

// discoverer keeps one backend's discovered metadata, fetching it by one request at a time and
// sparing a server that failed for metadataRetry.
type discoverer struct {
	b      *Backend
	client *http.Client
	now    func() time.Time
	group  singleflight.Group

	mu       sync.Mutex
	d        *discovered
	fetched  time.Time
	failedAt time.Time
	lastErr  error
	// beforeFlight, when set (tests only), runs after get found nothing usable and before the
	// flight.
	beforeFlight func()
}

// get returns the backend's authorization server, discovering it when it is not known or too
// old. An error wraps ErrAuthServer.
func (x *discoverer) get(ctx context.Context) (*discovered, error) {
	if d, err := x.known(); d != nil || err != nil {
		return d, err
	}
	if x.beforeFlight != nil {
		x.beforeFlight()
	}
	ch := x.group.DoChan("d", func() (any, error) {
		// A flight that ended between this caller's look and its DoChan has kept metadata or
		// a failure: discovering again would ask a failing server sooner than metadataRetry.
		if d, err := x.known(); d != nil || err != nil {
			return d, err
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*x.b.timeout())
		defer cancel()
		d, err := x.discover(dctx)
		x.mu.Lock()
		defer x.mu.Unlock()
		if err != nil {
			x.failedAt, x.lastErr = x.now(), err
			return nil, err
		}
		x.d, x.fetched, x.failedAt = d, x.now(), time.Time{}
		return d, nil
	})
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %s: %w", ErrAuthServer, x.b.Name, ctx.Err())
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*discovered), nil
	}
}

// known is the metadata discovered within metadataTTL, or the failure of a discovery within
// metadataRetry; both nil when discovery is to run.
func (x *discoverer) known() (*discovered, error) {
	x.mu.Lock()
	d, fetched, failedAt, lastErr := x.d, x.fetched, x.failedAt, x.lastErr
	x.mu.Unlock()
	now := x.now()
	if d != nil && now.Sub(fetched) < metadataTTL {
		return d, nil
	}
	if !failedAt.IsZero() && now.Sub(failedAt) < metadataRetry {
		return nil, lastErr
	}
	return nil, nil
}

// discover reads the backend's resource metadata (when it needs it for the authorization
// server or the scopes) and its authorization server's metadata.
func (x *discoverer) discover(ctx context.Context) (*discovered, error) {
	b := x.b
	issuer, scopes := b.AuthServer, b.Scopes
	if issuer == "" || len(scopes) == 0 {
		rm, err := x.resourceMetadata(ctx)
		switch {
		case err != nil && issuer == "":
			return nil, err
		case err == nil:
			if issuer, err = pickServer(b, rm); err != nil {
				return nil, err
			}
			if len(scopes) == 0 {
				if scopes, err = listedScopes(b, rm); err != nil {
					return nil, err
				}
			}
		}
	}
	as, err := x.serverMetadata(ctx, issuer)
	if err != nil {
		return nil, err
	}
	return &discovered{as: *as, scopes: scopes}, nil
}

// listedScopes is the scopes_supported of a backend's resource metadata, each a scope token
// and at most maxScopes of them: a value with a space would be shown on the connect page as one
// scope and asked of the server as two.
func listedScopes(b *Backend, rm *resourceMetadata) ([]string, error) {
	if len(rm.ScopesSupported) > maxScopes {
		return nil, fmt.Errorf("%w: %s: the resource metadata lists %d scopes, more than %d: configure auth.scopes",
			ErrAuthServer, b.Name, len(rm.ScopesSupported), maxScopes)
	}
	for _, sc := range rm.ScopesSupported {
		if !scopeToken(sc) {
			return nil, fmt.Errorf("%w: %s: the resource metadata lists a scope that is not a scope token (RFC 6749 §3.3): configure auth.scopes",
				ErrAuthServer, b.Name)
		}
	}
	return rm.ScopesSupported, nil
}

// pickServer chooses the authorization server among those the resource metadata lists: the
// configured one when it is listed, else the only one listed.
func pickServer(b *Backend, rm *resourceMetadata) (string, error) {
	if b.AuthServer != "" {
		return b.AuthServer, nil
	}
	if len(rm.AuthorizationServers) != 1 {
		return "", fmt.Errorf("%w: %s: the resource metadata lists %d authorization servers: configure auth.authServer",
			ErrAuthServer, b.Name, len(rm.AuthorizationServers))
	}
	if err := errors.Join(checkEndpoint(rm.AuthorizationServers[0]), egress.Named(b.URL, rm.AuthorizationServers[0])); err != nil {
		return "", fmt.Errorf("%w: %s: the authorization server it lists: %s", ErrAuthServer, b.Name, shownErr(err))
	}
	return rm.AuthorizationServers[0], nil
}

// resourceMetadata fetches the backend's protected resource metadata at the path-specific
// well-known URI, then at the root one (RFC 9728 §3.1), and checks that it is about the
// resource the gateway sends tokens to (§3.3).
func (x *discoverer) resourceMetadata(ctx context.Context) (*resourceMetadata, error) {
	u, err := url.Parse(x.b.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the backend URL does not parse", ErrAuthServer, x.b.Name)
	}
	var last error
	for _, p := range wellKnown("oauth-protected-resource", u.EscapedPath()) {
		var rm resourceMetadata
		if last = x.fetchJSON(ctx, u.Scheme+"://"+u.Host+p, &rm); last != nil {
			continue
		}
		if rm.Resource != x.b.resource() {
			return nil, fmt.Errorf("%w: %s: the resource metadata is about %q, not %q", ErrAuthServer, x.b.Name, shown(rm.Resource), x.b.resource())
		}
		return &rm, nil
	}
	return nil, last
}

// serverMetadata fetches issuer's metadata at the RFC 8414 and OpenID Connect well-known URIs
// in the order MCP gives (path insertion first), and checks that it names that issuer exactly,
// that its endpoints may receive codes and tokens, and that it supports PKCE with S256.
func (x *discoverer) serverMetadata(ctx context.Context, issuer string) (*asMetadata, error) {
	u, err := url.Parse(issuer)
	if err != nil || checkEndpoint(issuer) != nil {
		return nil, fmt.Errorf("%w: %s: issuer %q is not an https URL", ErrAuthServer, x.b.Name, issuer)
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	urls := []string{}
	for _, p := range wellKnown("oauth-authorization-server", path) {
		urls = append(urls, u.Scheme+"://"+u.Host+p)
	}
	urls = append(urls, u.Scheme+"://"+u.Host+"/.well-known/openid-configuration"+path)
	if path != "" {
		urls = append(urls, strings.TrimSuffix(issuer, "/")+"/.well-known/openid-configuration")
	}
	var last error
	for _, m := range urls {
		var as asMetadata
		if last = x.fetchJSON(ctx, m, &as); last != nil {
			continue
		}
		return x.checkServer(issuer, &as)
	}
	return nil, last
}

func (x *discoverer) checkServer(issuer string, as *asMetadata) (*asMetadata, error) {
	name := x.b.Name
	if as.Issuer != issuer {
		// RFC 8414 §3.3: a metadata document naming another issuer is refused (mix-up).
		return nil, fmt.Errorf("%w: %s: the metadata names issuer %q, not %q", ErrAuthServer, name, shown(as.Issuer), issuer)
	}
	if !slices.Contains(as.CodeChallengeMethods, "S256") {
		return nil, fmt.Errorf("%w: %s: the authorization server does not say it supports PKCE with S256", ErrAuthServer, name)
	}
	for _, e := range []struct{ what, url string }{{"authorization_endpoint", as.AuthorizationEndpoint},
		{"token_endpoint", as.TokenEndpoint}} {
		if err := errors.Join(checkEndpointURL(e.url), egress.Named(issuer, e.url)); err != nil {
			return nil, fmt.Errorf("%w: %s: %s: %s", ErrAuthServer, name, e.what, shownErr(err))
		}
	}
	for _, opt := range []*string{&as.RevocationEndpoint, &as.RegistrationEndpoint} {
		if *opt != "" && (checkEndpointURL(*opt) != nil || egress.Named(issuer, *opt) != nil) {
			*opt = "" // unusable: treated as absent
		}
	}
	return as, nil
}

// maxShownBytes bounds each value of a document a discovery refusal repeats (shown): enough
// for the operator to recognise it, not the whole document in every log line of every call and
// connect that fails on it.
const maxShownBytes = 256

// shown is s, a value of a backend's or an authorization server's document, as a refusal
// names it (cutText to maxShownBytes).
func shown(s string) string { return cutText(s, maxShownBytes) }

// shownErr is err's text as a refusal repeats it: it may name a URL of a document or its host
// (egress.Named), cut as shown cuts a value (twice the bound: one error may name two).
func shownErr(err error) string { return cutText(err.Error(), 2*maxShownBytes) }

// checkEndpointURL is checkEndpoint for an endpoint, which may carry a query (RFC 6749 §3.1).
func checkEndpointURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("does not parse")
	}
	u.RawQuery = ""
	return checkEndpoint(u.String())
}

// wellKnown returns the well-known paths of suffix for a resource or issuer path: inserted
// between the host and the path, then at the root.
func wellKnown(suffix, path string) []string {
	path = strings.TrimSuffix(path, "/")
	if path == "" {
		return []string{"/.well-known/" + suffix}
	}
	return []string{"/.well-known/" + suffix + path, "/.well-known/" + suffix}
}

// fetchJSON GETs u and decodes its JSON body into v. An error wraps ErrAuthServer and names
// neither the body nor anything it echoes.
func (x *discoverer) fetchJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%w: %s: metadata URL: %v", ErrAuthServer, x.b.Name, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := x.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: metadata %s", ErrAuthServer, x.b.Name, unreachable(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	switch {
	case err != nil || len(body) > maxMetadataBytes:
		return fmt.Errorf("%w: %s: metadata unreadable or too large", ErrAuthServer, x.b.Name)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%w: %s: metadata answered HTTP %d", ErrAuthServer, x.b.Name, resp.StatusCode)
	case json.Unmarshal(body, v) != nil:
		return fmt.Errorf("%w: %s: metadata is not a JSON object", ErrAuthServer, x.b.Name)
	}
	return nil
}

// ProbeAuthServer discovers the authorization server of backends[i] as the first connect to it
// would, with the client a Service for backends uses by default (defaultClient, all of them:
// one backend's documents may name another configured backend's host): its protected resource
// metadata when it names no authServer or no scopes, then the server's metadata, checked as a
// connect checks it. It returns the issuer, for operator tooling (check-config --online); it
// sends no token. cfg's AllowAddresses apply, as they do to the Service.
func ProbeAuthServer(ctx context.Context, cfg Config, backends []Backend, i int) (string, error) {
	if i < 0 || i >= len(backends) {
		return "", fmt.Errorf("no backend %d: %d configured", i, len(backends))
	}
	b := backends[i]
	x := &discoverer{b: &b, client: defaultClient(cfg, backends), now: time.Now}
	d, err := x.discover(ctx)
	if err != nil {
		return "", err
	}
	return d.as.Issuer, nil
}
