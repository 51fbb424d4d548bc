package approval

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/loopback"
)

// Defaults of Config.
const (
	// DefaultPath is where the page is served when Config.Path is empty.
	DefaultPath = "/approval"
	// DefaultSessionTTL is the lifetime of the page's session cookie.
	DefaultSessionTTL = 10 * time.Minute
	// MaxSessionTTL bounds Config.SessionTTL: the session approves risky calls and is meant to
	// last one visit.
	MaxSessionTTL = time.Hour
	// DefaultMaxPendingPerCaller is how many calls of one caller may wait for the page at once.
	DefaultMaxPendingPerCaller = 16
	// MaxMaxPendingPerCaller bounds Config.MaxPendingPerCaller.
	MaxMaxPendingPerCaller = 1024
	// DefaultMaxPendingBytesPerCaller is how many bytes of sealed call records one caller may
	// keep waiting for the page at once: four calls of the largest arguments the page takes.
	DefaultMaxPendingBytesPerCaller = 8 << 20
	// MinMaxPendingBytesPerCaller and MaxMaxPendingBytesPerCaller bound
	// Config.MaxPendingBytesPerCaller.
	MinMaxPendingBytesPerCaller = 64 << 10
	MaxMaxPendingBytesPerCaller = 1 << 30
)

// Config is the approval page's configuration (the `approval:` block).
type Config struct {
	// Path is the URL path prefix of the page, which owns every path under it: it must neither
	// be nor hold a path the MCP endpoints serve (server.path, a tool set's, a Server Card, the
	// protected resource metadata), nor be under or over userOAuth.path. Default DefaultPath.
	Path string `yaml:"path"`
	// BaseURL is where users reach the gateway's pages: the scheme and host, and the path
	// prefix a balancer routing by path puts before the gateway's own paths, e.g.
	// https://gw.example.com or https://gw.example.com/team-a. The page is at BaseURL + Path.
	// Default: what server.publicURL places before server.path (docs/approval.md).
	BaseURL string `yaml:"baseURL"`
	// Issuer is the OpenID Connect issuer users sign in with. It must be one of auth.issuers;
	// only callers with tokens of this issuer can approve. Default: the only auth issuer.
	Issuer string `yaml:"issuer"`
	// ClientID is the gateway's client at Issuer (authorization code flow with PKCE; its
	// redirect URI is BaseURL + Path + "/callback").
	ClientID string `yaml:"clientID"`
	// ClientSecret is that client's secret; empty for a public client. It is resolved by the
	// caller, never read from this struct's YAML.
	ClientSecret string `yaml:"-"`
	// SessionTTL is the lifetime of the page's session cookie. Default DefaultSessionTTL; at
	// most MaxSessionTTL.
	SessionTTL time.Duration `yaml:"sessionTTL"`
	// MaxPendingPerCaller bounds the calls of one caller (issuer and subject) kept waiting for
	// a decision at once, on every replica together; more are refused before anything is
	// stored. A call stops waiting when its retry is used, denied or declined, or when it
	// expires (mrtr.ttl). Default DefaultMaxPendingPerCaller; 1 to MaxMaxPendingPerCaller.
	MaxPendingPerCaller int `yaml:"maxPendingPerCaller"`
	// MaxPendingBytesPerCaller bounds the bytes of those calls' sealed records (about 1.4 times
	// their arguments). Default DefaultMaxPendingBytesPerCaller; MinMaxPendingBytesPerCaller
	// to MaxMaxPendingBytesPerCaller.
	MaxPendingBytesPerCaller int64 `yaml:"maxPendingBytesPerCaller"`
}

// Enabled reports whether the page is configured.
func (c Config) Enabled() bool { return c.ClientID != "" }

// WithDefaults fills the zero fields that have defaults.
func (c Config) WithDefaults() Config {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	c.Path = strings.TrimSuffix(c.Path, "/")
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.MaxPendingPerCaller == 0 {
		c.MaxPendingPerCaller = DefaultMaxPendingPerCaller
	}
	if c.MaxPendingBytesPerCaller == 0 {
		c.MaxPendingBytesPerCaller = DefaultMaxPendingBytesPerCaller
	}
	return c
}

// Validate reports every problem in a configured page at once, each a *configerr.Error naming
// the setting's key path in the gateway's configuration file (approval.baseURL).
func (c Config) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if !strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, "?#*{}: ") || c.Path == "/" {
		add("approval.path", "%q: want an absolute path other than /, without wildcards", c.Path)
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(u.Path, "*{}: ") {
		add("approval.baseURL", "%q: want scheme://host[:port] and an optional path prefix (default: placed by server.publicURL)", c.BaseURL)
	} else if u.Scheme == "http" && !loopback.Host(u.Hostname()) {
		// The session cookie is Secure: over plain http only loopback development works, and
		// anywhere else the sign-in would travel in clear.
		add("approval.baseURL", "%q: want https (http only on loopback)", c.BaseURL)
	}
	if c.Issuer == "" {
		add("approval.issuer", "required: one of auth.issuers (the default when there is only one)")
	}
	if c.ClientID == "" {
		add("approval.clientID", "required")
	}
	if c.SessionTTL < time.Minute || c.SessionTTL > MaxSessionTTL {
		add("approval.sessionTTL", "%s: want 1m to %s", c.SessionTTL, MaxSessionTTL)
	}
	if c.MaxPendingPerCaller < 1 || c.MaxPendingPerCaller > MaxMaxPendingPerCaller {
		add("approval.maxPendingPerCaller", "%d: want 1 to %d", c.MaxPendingPerCaller, MaxMaxPendingPerCaller)
	}
	if c.MaxPendingBytesPerCaller < MinMaxPendingBytesPerCaller || c.MaxPendingBytesPerCaller > MaxMaxPendingBytesPerCaller {
		add("approval.maxPendingBytesPerCaller", "%d: want %d to %d",
			c.MaxPendingBytesPerCaller, MinMaxPendingBytesPerCaller, MaxMaxPendingBytesPerCaller)
	}
	return errors.Join(errs...)
}

// pageURL is the page of the call with nonce id.
func (c Config) pageURL(id string) string {
	return strings.TrimSuffix(c.BaseURL, "/") + c.Path + "/c/" + id
}

// redirectURL is the sign-in callback registered at the issuer.
func (c Config) redirectURL() string {
	return strings.TrimSuffix(c.BaseURL, "/") + c.Path + "/callback"
}

// publicPath is the path a browser reaches the page at: BaseURL's path prefix, then Path. What
// the page sends the browser to (its forms, its links, the return from sign-in) is under it,
// since the browser's requests reach the gateway only through the balancer that adds the prefix.
func (c Config) publicPath() string {
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return c.Path
	}
	return strings.TrimSuffix(u.EscapedPath(), "/") + c.Path
}
