package useroauth

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/clientaddr"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/loopback"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/vault"
)

// Defaults and bounds of Config and Backend.
const (
	// DefaultPath is where the connect pages are served when Config.Path is empty.
	DefaultPath = "/connect"
	// DefaultConsentTTL is how long a connect link, and one round trip to a backend's
	// authorization server, stay valid.
	DefaultConsentTTL = 10 * time.Minute
	// MaxConsentTTL bounds Config.ConsentTTL.
	MaxConsentTTL = time.Hour
	// DefaultClientName names the gateway to authorization servers that register it (dynamic
	// registration, a client ID metadata document) and shows on their consent screens.
	DefaultClientName = "MCP gateway"
	// DefaultTimeout bounds one request to a backend's authorization server or metadata.
	DefaultTimeout = 10 * time.Second
	// MaxTimeout bounds Backend.Timeout: a refresh holds the other replicas off for twice as
	// long, so a replica that died while refreshing must not hold them off for hours.
	MaxTimeout = time.Minute
	// DefaultRefreshBefore is how long before its expiry an access token is refreshed.
	DefaultRefreshBefore = time.Minute
	// DefaultTokenLifetime is assumed for an access token issued without expires_in (RFC 6749
	// §5.1 makes it optional) with a refresh token: short, so an unknown lifetime is not trusted
	// for long. Without a refresh token nothing is assumed: it is used until the backend refuses
	// it.
	DefaultTokenLifetime = 5 * time.Minute
	// DefaultRefreshCooldown is how long a replica sends a backend's authorization server no
	// refresh after one failed at the server itself, the first time in a row (each further
	// failure doubles it, up to MaxRefreshCooldown).
	DefaultRefreshCooldown = 5 * time.Second
	// MaxRefreshCooldown bounds Config.RefreshCooldown and the doubling it begins.
	MaxRefreshCooldown = 5 * time.Minute
)

// Registration is how the gateway becomes a client of a backend's authorization server.
type Registration string

// The registrations an operator chooses from, per backend.
const (
	// RegistrationStatic: a client id (and secret, for a confidential client) the operator
	// registered at the authorization server and configured.
	RegistrationStatic Registration = "static"
	// RegistrationMetadataDocument: the client id is the URL of the gateway's Client ID
	// Metadata Document, served on the connect path, which the authorization server fetches
	// (its metadata says client_id_metadata_document_supported). A public client.
	RegistrationMetadataDocument Registration = "metadataDocument"
	// RegistrationDynamic: the gateway registers itself at the authorization server's
	// registration_endpoint (RFC 7591) once, shared by every replica through the store.
	RegistrationDynamic Registration = "dynamic"
)

// Config is the `userOAuth:` block: the connect pages and the token vault of the backends whose
// auth.type is userOAuth (docs/user-oauth.md).
type Config struct {
	// Path is the URL path prefix of the connect pages, which own every path under it: it must
	// neither be nor hold a path the MCP endpoints serve (server.path, a tool set's, a Server
	// Card, the protected resource metadata), nor be under or over approval.path. Default
	// DefaultPath.
	Path string `yaml:"path"`
	// Keys seal the token records (AES-256-GCM), oldest first: the last seals, every one opens;
	// rotate by adding a key, and remove the old one once records were sealed again (every
	// refresh does). Resolved from secrets by the caller, never read from this struct's YAML.
	Keys []seal.Key `yaml:"-"`
	// ConsentTTL is how long a connect link a call hands out, and one round trip to the
	// authorization server, stay valid. Default DefaultConsentTTL; 1m to MaxConsentTTL.
	ConsentTTL time.Duration `yaml:"consentTTL"`
	// MaxRecordBytes bounds one caller's sealed tokens for one backend. Default
	// vault.DefaultMaxRecordBytes.
	MaxRecordBytes int `yaml:"maxRecordBytes"`
	// ClientName is the gateway's name at authorization servers that register it. Default
	// DefaultClientName.
	ClientName string `yaml:"clientName"`
	// RecordIdle is how long a caller's tokens for a backend are kept unused (no call with
	// them, no refresh) before they are removed: the tokens of a user deleted at the identity
	// provider leave the vault within it. Default vault.DefaultRecordIdle (30 days); at least
	// 1h.
	RecordIdle time.Duration `yaml:"recordIdle"`
	// RecordMaxAge is how long they are kept after the user's consent, used or not: then the
	// user consents again. Default vault.DefaultRecordMaxAge (180 days); at least 1h, and at
	// least RecordIdle.
	RecordMaxAge time.Duration `yaml:"recordMaxAge"`
	// RefreshCooldown is how long a replica sends a backend's authorization server no refresh
	// after one failed at the server itself (callers whose token expired are told to retry
	// after it); each further failure in a row doubles it, up to MaxRefreshCooldown. Default
	// DefaultRefreshCooldown; 1s to MaxRefreshCooldown.
	RefreshCooldown time.Duration `yaml:"refreshCooldown"`
	// AllowAddresses are CIDRs (or single addresses) the gateway may connect to for an
	// endpoint the backends' or their authorization servers' documents name, whatever the
	// address's class: a deployment's own need, such as an authorization server on loopback or
	// a link-local address reached by a name the documents use, or a network's NAT64 prefix
	// within 64:ff9b:1::/48. Empty (the default): loopback and 64:ff9b:1::/48 only under a
	// configured host (loopback also under a loopback name), never link-local, unspecified or
	// multicast (docs/user-oauth.md, "Where the gateway goes").
	AllowAddresses []string `yaml:"allowAddresses"`
}

// allowPrefixes returns AllowAddresses parsed; an entry that does not parse (Validate reports
// it) allows nothing.
func (c Config) allowPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, a := range c.AllowAddresses {
		if p, err := clientaddr.ParsePrefix(a); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// WithDefaults fills the zero fields that have defaults.
func (c Config) WithDefaults() Config {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	c.Path = strings.TrimSuffix(c.Path, "/")
	if c.ConsentTTL == 0 {
		c.ConsentTTL = DefaultConsentTTL
	}
	if c.ClientName == "" {
		c.ClientName = DefaultClientName
	}
	if c.RecordIdle == 0 {
		c.RecordIdle = vault.DefaultRecordIdle
	}
	if c.RecordMaxAge == 0 {
		c.RecordMaxAge = vault.DefaultRecordMaxAge
	}
	if c.RefreshCooldown == 0 {
		c.RefreshCooldown = DefaultRefreshCooldown
	}
	return c
}

// Validate reports every problem of c (with its defaults) at once, each a *configerr.Error under
// userOAuth.
func (c Config) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, configerr.At("userOAuth."+path, format, args...))
	}
	if !strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, "?#*{}: ") || c.Path == "/" {
		add("path", "%q: want an absolute path other than /, without wildcards", c.Path)
	}
	if len(c.Keys) == 0 {
		add("keys", "required: at least one key (a secret of 32 bytes or more) seals the token records")
	} else if err := (seal.Config{Keys: c.Keys}).Validate(); err != nil {
		add("keys", "%v", err)
	}
	if c.ConsentTTL < time.Minute || c.ConsentTTL > MaxConsentTTL {
		add("consentTTL", "%s: want 1m to %s", c.ConsentTTL, MaxConsentTTL)
	}
	if c.MaxRecordBytes < 0 { // a positive value's range is the gateway's (configRanges); the vault refuses one past it
		add("maxRecordBytes", "%d: want 0 (default %d) or more", c.MaxRecordBytes, vault.DefaultMaxRecordBytes)
	}
	if c.RecordIdle < vault.MinRecordLife {
		add("recordIdle", "%s: want at least %s", c.RecordIdle, vault.MinRecordLife)
	}
	if c.RecordMaxAge < vault.MinRecordLife || c.RecordMaxAge < c.RecordIdle {
		add("recordMaxAge", "%s: want at least %s and at least recordIdle (%s)", c.RecordMaxAge, vault.MinRecordLife, c.RecordIdle)
	}
	if c.RefreshCooldown < time.Second || c.RefreshCooldown > MaxRefreshCooldown {
		add("refreshCooldown", "%s: want 1s to %s", c.RefreshCooldown, MaxRefreshCooldown)
	}
	for i, a := range c.AllowAddresses {
		if _, err := clientaddr.ParsePrefix(a); err != nil {
			add(fmt.Sprintf("allowAddresses[%d]", i), "%v", err)
		}
	}
	if len(c.ClientName) > 128 || strings.ContainsAny(c.ClientName, "\r\n\x00") {
		add("clientName", "want at most 128 characters without control characters")
	}
	return errors.Join(errs...)
}

// Backend is one backend whose callers connect their own accounts: what the gateway needs to be
// an OAuth client of its authorization server on their behalf. The caller fills it from the
// backend's configuration (its auth block).
type Backend struct {
	// Name is the backend's name.
	Name string
	// URL is the backend's MCP endpoint: where its protected resource metadata is looked up
	// (RFC 9728) and, unless Resource says otherwise, the resource its tokens are for.
	URL string
	// Resource is the RFC 8707 resource indicator sent in the authorization and token requests,
	// and the resource the metadata must name. Default URL.
	Resource string
	// AuthServer is the issuer of the authorization server. Default: the one the backend's
	// protected resource metadata lists (it must list exactly one then). Required with a
	// ClientSecret.
	AuthServer string
	// Scopes are requested. Default: the scopes_supported of the resource metadata.
	Scopes []string
	// Registration is how the gateway is a client there. Default RegistrationStatic.
	Registration Registration
	// ClientID and ClientSecret are the static registration's client (the secret is empty for a
	// public client). A secret needs AuthServer: it is sent to that server's token and
	// revocation endpoints only.
	ClientID, ClientSecret string
	// Timeout bounds one request to the authorization server. Default DefaultTimeout.
	Timeout time.Duration
	// RefreshBefore is how long before expiry a token is refreshed. Default
	// DefaultRefreshBefore; never more than half the token's lifetime.
	RefreshBefore time.Duration
}

// Problems reports every problem of b, each a *configerr.Error relative to the backend's auth
// block.
func (b *Backend) Problems() []error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	switch b.Registration {
	case "", RegistrationStatic:
		if b.ClientID == "" {
			add("clientID", "required with registration static (the default)")
		}
		if b.ClientSecret != "" && b.AuthServer == "" {
			// Without authServer the backend's own resource metadata names the server, and
			// the secret would go to whichever server a compromised backend names.
			add("authServer", "required with a clientSecret: the secret is registered at one authorization server and is sent "+
				"to it alone, not to whichever server the backend's resource metadata names; set authServer to its issuer")
		}
	case RegistrationMetadataDocument, RegistrationDynamic:
		if b.ClientID != "" || b.ClientSecret != "" {
			add("clientID", "the %s registration makes its own client: leave clientID and clientSecret out", b.Registration)
		}
	default:
		add("registration", "%q: want %s, %s or %s", b.Registration, RegistrationStatic, RegistrationMetadataDocument, RegistrationDynamic)
	}
	if strings.ContainsAny(b.ClientID+b.ClientSecret, "\r\n\x00") {
		add("clientID", "clientID or clientSecret has a control character")
	}
	if b.Timeout < 0 || b.Timeout > MaxTimeout {
		add("timeout", "%s: want at most %s for a per-user OAuth backend (one request to its authorization server)", b.Timeout, MaxTimeout)
	}
	if b.AuthServer != "" {
		if err := checkEndpoint(b.AuthServer); err != nil {
			add("authServer", "%v", err)
		} else if strings.Contains(b.AuthServer+"/", "/.well-known/") {
			// Discovery looks for the metadata under the issuer.
			add("authServer", "the issuer, not its discovery document: want the URL before /.well-known/")
		}
	}
	if b.Resource != "" {
		if u, err := url.Parse(b.Resource); err != nil || !u.IsAbs() || u.Fragment != "" {
			add("resource", "want an absolute URI without fragment (RFC 8707)")
		}
	}
	for _, s := range b.Scopes {
		if !scopeToken(s) {
			add("scopes", "%q is not a scope token (RFC 6749 §3.3)", s)
		}
	}
	if len(b.Scopes) > maxScopes {
		add("scopes", "%d scopes: want at most %d", len(b.Scopes), maxScopes)
	}
	return errs
}

// maxScopes bounds the scopes the gateway asks for: configured, or listed by a backend's
// resource metadata.
const maxScopes = 64

// scopeToken reports whether s is one scope token (RFC 6749 §3.3: one or more of %x21, %x23-5B,
// %x5D-7E, at most 256 here): what a page shows as one scope is one scope to the server.
func scopeToken(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// checkEndpoint refuses an authorization server URL the gateway would send codes, secrets or
// tokens to in clear: https, or http on a loopback host.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Fragment != "" || u.RawQuery != "" || u.User != nil {
		return errors.New("want an absolute URL without user info, query or fragment")
	}
	if u.Scheme == "https" {
		return nil
	}
	if u.Scheme == "http" && loopback.Host(u.Hostname()) {
		return nil
	}
	return errors.New("want https (http only on a loopback host): codes and tokens travel to it")
}

func (b *Backend) resource() string {
	if b.Resource != "" {
		return b.Resource
	}
	return b.URL
}

func (b *Backend) timeout() time.Duration {
	if b.Timeout > 0 {
		return b.Timeout
	}
	return DefaultTimeout
}

// lockTTL is how long a replica's refresh lock holds the others off: longer than its refresh
// can run (twice timeout: discovery, then the token request; the flight's deadline) and the
// time it may then spend storing the result (storeWindow), so no other replica refreshes with
// the same refresh token while it runs (a server that rotates refresh tokens would take the
// second use for a replay). A replica that died holding it stops refreshes no longer than
// that.
func (b *Backend) lockTTL() time.Duration {
	return max(minLockTTL, 2*b.timeout()+storeWindow)
}

func (b *Backend) registration() Registration {
	if b.Registration == "" {
		return RegistrationStatic
	}
	return b.Registration
}
