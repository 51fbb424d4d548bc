// Package devissuer is a small OpenID Connect issuer for tests and the local
// demo. It is for development and tests only: it keeps private keys in memory,
// mints whatever claims it is asked to, and offers helpers that forge hostile
// tokens. Never run it as a production identity provider.
//
// It serves discovery (/.well-known/openid-configuration), a JWKS, an
// optional client-credentials token endpoint and an optional authorization
// code flow with PKCE and a password-less sign-in form (authcode.go) over real
// HTTP on a loopback listener, so that relying parties such as go-oidc exercise their real code
// paths (discovery, key fetch, signature verification) against it.
package devissuer

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/mcp-gateway/gateway/internal/loopback"
)

// Default option values.
const (
	// DefaultAddr is the listen address when Options.Addr is empty.
	DefaultAddr = "127.0.0.1:0"
	// DefaultTTL is the lifetime of minted tokens without an "exp" claim.
	DefaultTTL = 10 * time.Minute
	// DefaultRSABits is the RSA modulus size of generated keys.
	DefaultRSABits = 2048
	// DefaultSubject is the "sub" of minted tokens without one.
	DefaultSubject = "dev-user"
)

// Signing algorithms the issuer can hold keys for.
const (
	// RS256 is RSASSA-PKCS1-v1_5 with SHA-256.
	RS256 = "RS256"
	// ES256 is ECDSA P-256 with SHA-256.
	ES256 = "ES256"
)

const (
	discoveryPath = "/.well-known/openid-configuration"
	jwksPath      = "/jwks"
	tokenPath     = "/token"
	mintPath      = "/mint"
	minRSABits    = 2048
	shutdownGrace = 2 * time.Second
	maxFormBytes  = 64 << 10
)

// Sentinel errors.
var (
	// ErrNotLoopback is returned by New for a listen address that is not a
	// loopback address: a development issuer must not be reachable from the
	// network.
	ErrNotLoopback = errors.New("devissuer: listen address is not loopback")
	// ErrUnknownAlgorithm is returned for an algorithm other than RS256 or ES256.
	ErrUnknownAlgorithm = errors.New("devissuer: unknown algorithm")
)

// Options configures an Issuer.
type Options struct {
	// Addr is the loopback host:port to listen on. Default DefaultAddr.
	Addr string
	// Audience is the "aud" of minted tokens that carry none. Empty: no aud.
	Audience string
	// TTL is the lifetime of minted tokens that carry no "exp". Default DefaultTTL.
	TTL time.Duration
	// RSABits is the RSA key size. Default DefaultRSABits; at least 2048.
	RSABits int
	// Signer is the algorithm of the initial signing key, RS256 (default) or
	// ES256. One key of each algorithm is always created.
	Signer string
	// Clients maps client ids to secrets accepted by the client-credentials
	// token endpoint. Empty: no token endpoint is served or advertised.
	Clients map[string]string
	// WebClients are the clients of the authorization code flow, by client id.
	// Empty: no authorization endpoint is served or advertised.
	WebClients map[string]WebClient
	// Users are who can sign in on the authorization endpoint's form, by username
	// (the "sub" of their tokens), with the claims their tokens carry besides.
	Users map[string]Claims
	// Now is the clock for iat/exp. Default time.Now.
	Now func() time.Time
	// MintEndpoint serves POST /mint, which signs a token for whatever subject, scopes and
	// groups it is sent, without any credential (mint.go): for `gateway-demo issuer` only.
	MintEndpoint bool
}

// Claims are JWT claims. A nil value deletes a claim the issuer would
// otherwise add by default (for example {"exp": nil} mints a token without exp).
type Claims map[string]any

type signingKey struct {
	kid  string
	alg  string
	priv crypto.Signer
}

// Issuer is a running development OIDC issuer. Its methods are safe for
// concurrent use.
type Issuer struct {
	opts     Options
	url      string
	listener net.Listener
	server   *http.Server
	down     atomic.Bool
	codes    codes

	mu     sync.RWMutex
	keys   []signingKey // published, oldest first
	signer int          // index into keys
	serial int
}

// New starts an issuer listening on opts.Addr. Call Close when done.
func New(opts Options) (*Issuer, error) {
	opts = withDefaults(opts)
	if err := checkLoopback(opts.Addr); err != nil {
		return nil, err
	}
	if opts.RSABits < minRSABits {
		return nil, fmt.Errorf("devissuer: RSABits %d below %d", opts.RSABits, minRSABits)
	}
	if opts.Signer != RS256 && opts.Signer != ES256 {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAlgorithm, opts.Signer)
	}
	iss := &Issuer{opts: opts}
	for _, alg := range []string{RS256, ES256} {
		if _, err := iss.addKey(alg); err != nil {
			return nil, err
		}
	}
	if opts.Signer == ES256 {
		iss.signer = 1
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("devissuer: listen: %w", err)
	}
	iss.listener = ln
	iss.url = "http://" + ln.Addr().String()
	iss.server = &http.Server{Handler: iss.routes(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = iss.server.Serve(ln) }()
	return iss, nil
}

func withDefaults(o Options) Options {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.RSABits == 0 {
		o.RSABits = DefaultRSABits
	}
	if o.Signer == "" {
		o.Signer = RS256
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func checkLoopback(addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("devissuer: address %q: %w", addr, err)
	}
	if !loopback.Addr(addr) {
		return fmt.Errorf("%w: %q", ErrNotLoopback, addr)
	}
	return nil
}

// URL is the issuer identifier ("iss"), e.g. http://127.0.0.1:34567.
func (i *Issuer) URL() string { return i.url }

// JWKSURL is the URL of the published key set.
func (i *Issuer) JWKSURL() string { return i.url + jwksPath }

// MintURL is the credential-less mint endpoint, or "" without Options.MintEndpoint.
func (i *Issuer) MintURL() string {
	if !i.opts.MintEndpoint {
		return ""
	}
	return i.url + mintPath
}

// TokenURL is the token endpoint, or "" when Options.Clients and
// Options.WebClients are empty.
func (i *Issuer) TokenURL() string {
	if len(i.opts.Clients) == 0 && len(i.opts.WebClients) == 0 {
		return ""
	}
	return i.url + tokenPath
}

// Close stops the HTTP server.
func (i *Issuer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	return i.server.Shutdown(ctx)
}

// SetDown makes every endpoint answer 503 while down is true, to simulate an
// identity provider outage without losing the listen address.
func (i *Issuer) SetDown(down bool) { i.down.Store(down) }

// RotateOptions controls Rotate.
type RotateOptions struct {
	// Alg is the algorithm of the new key, RS256 (default) or ES256.
	Alg string
	// DropOld unpublishes every older key, so tokens they signed stop verifying.
	DropOld bool
}

// Rotate adds a new key, makes it the signer and returns its kid. Older keys
// stay published unless DropOld is set.
func (i *Issuer) Rotate(o RotateOptions) (string, error) {
	if o.Alg == "" {
		o.Alg = RS256
	}
	idx, err := i.addKey(o.Alg)
	if err != nil {
		return "", err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if o.DropOld {
		i.keys = i.keys[idx:]
		idx = 0
	}
	i.signer = idx
	return i.keys[idx].kid, nil
}

// Withdraw unpublishes the key kid, as an issuer does with a rotated-out key once its tokens
// have expired, or with a compromised one: tokens it signed stop verifying, the other keys' do
// not. The signing key cannot be withdrawn (Rotate first).
func (i *Issuer) Withdraw(kid string) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	for j, k := range i.keys {
		if k.kid != kid {
			continue
		}
		if j == i.signer {
			return fmt.Errorf("devissuer: %q is the signing key", kid)
		}
		i.keys = append(i.keys[:j:j], i.keys[j+1:]...)
		if j < i.signer {
			i.signer--
		}
		return nil
	}
	return fmt.Errorf("devissuer: no key %q", kid)
}

// Kids returns the published key ids, oldest first, and the signer's kid.
func (i *Issuer) Kids() (published []string, signer string) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	for _, k := range i.keys {
		published = append(published, k.kid)
	}
	return published, i.keys[i.signer].kid
}

func (i *Issuer) addKey(alg string) (int, error) {
	priv, err := generate(alg, i.opts.RSABits)
	if err != nil {
		return 0, err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.serial++
	i.keys = append(i.keys, signingKey{kid: fmt.Sprintf("dev-%s-%d", strings.ToLower(alg), i.serial), alg: alg, priv: priv})
	return len(i.keys) - 1, nil
}

func generate(alg string, rsaBits int) (crypto.Signer, error) {
	switch alg {
	case RS256:
		return rsa.GenerateKey(rand.Reader, rsaBits)
	case ES256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownAlgorithm, alg)
	}
}

func (i *Issuer) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+discoveryPath, i.serveDiscovery)
	mux.HandleFunc("GET "+jwksPath, i.serveJWKS)
	mux.HandleFunc("POST "+tokenPath, i.serveToken)
	mux.HandleFunc("GET "+authorizePath, i.serveAuthorize)
	mux.HandleFunc("POST "+authorizePath, i.serveAuthorize)
	if i.opts.MintEndpoint {
		mux.HandleFunc("POST "+mintPath, i.serveMint)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if i.down.Load() {
			http.Error(w, "issuer down", http.StatusServiceUnavailable)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (i *Issuer) serveDiscovery(w http.ResponseWriter, _ *http.Request) {
	doc := map[string]any{
		"issuer":                                i.url,
		"jwks_uri":                              i.JWKSURL(),
		"id_token_signing_alg_values_supported": []string{RS256, ES256},
		"response_types_supported":              []string{"token"},
		"subject_types_supported":               []string{"public"},
	}
	if tu := i.TokenURL(); tu != "" {
		doc["token_endpoint"] = tu
		var grants []string
		if len(i.opts.Clients) > 0 {
			grants = append(grants, "client_credentials")
		}
		methods := []string{"client_secret_basic", "client_secret_post"}
		if au := i.AuthorizeURL(); au != "" {
			grants, methods = append(grants, "authorization_code"), append(methods, "none")
			doc["authorization_endpoint"] = au
			doc["response_types_supported"] = []string{"code"}
			doc["code_challenge_methods_supported"] = []string{"S256"}
			doc["scopes_supported"] = []string{"openid", "profile"}
		}
		doc["grant_types_supported"] = grants
		doc["token_endpoint_auth_methods_supported"] = methods
		// RFC 9449 §5.1: the token endpoint binds tokens to a DPoP proof's key.
		doc["dpop_signing_alg_values_supported"] = dpopAlgorithms()
	}
	writeJSON(w, http.StatusOK, doc)
}

func (i *Issuer) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	i.mu.RLock()
	set := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, 0, len(i.keys))}
	for _, k := range i.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: k.alg, Use: "sig"})
	}
	i.mu.RUnlock()
	writeJSON(w, http.StatusOK, set)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
