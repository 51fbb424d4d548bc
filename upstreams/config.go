// Package upstreams holds the gateway's backends: one HTTP client per backend MCP server,
// forwarding of single calls with streamed responses, fan-out and merge of list methods,
// namespacing of tool and prompt names and resource URIs, merged capabilities for
// server/discover, subscriptions/listen fan-out, and health probing (docs/protocol.md §2, §5).
//
// The client's credentials never reach a backend. The caller passes only the headers it has
// selected for pass-through, and even among those Authorization, Cookie and anything but
// Mcp-Param-*, trace context and the request id are dropped (wire.CopyPassThrough); each backend gets
// its own configured static headers or credentials. The one client credential the package
// holds is the caller's verified bearer token in Call.SubjectToken, ListRequest.SubjectToken or
// ToolHeaderQuery.SubjectToken, and only for a backend configured for RFC 8693 token exchange:
// there it is sent as the subject_token to that backend's token endpoint, never to the backend
// itself, never logged, and kept in memory only as a SHA-256 key of the exchanged-token cache and
// of the caller's pre-2026 sessions. For every other backend the package drops it before the
// request is built (backend.subjectFor).
package upstreams

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/era"
)

// Defaults for the configuration fields.
const (
	// DefaultTimeout bounds a whole call to a backend; long tool calls are legitimate.
	DefaultTimeout = 60 * time.Second
	// DefaultConnectTimeout bounds the TCP connect and the TLS handshake.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultMaxResponseBytes bounds a JSON response body and each SSE event.
	DefaultMaxResponseBytes = 16 << 20
	// DefaultSeparator joins the backend name and the backend's tool or prompt name.
	DefaultSeparator = "__"
	// DefaultHealthInterval is the period of the server/discover health probe.
	DefaultHealthInterval = 15 * time.Second
	// DefaultPageSize is the number of merged list items per page sent to the client.
	DefaultPageSize = 100
	// MaxSeparatorBytes bounds the separator so namespaced names stay short.
	MaxSeparatorBytes = 8
	// MaxPageSize bounds Config.PageSize.
	MaxPageSize = 1000
)

// Values of UpstreamConfig.Protocol besides the legacy revisions in protocolChoices.
const (
	// ProtocolAuto detects the backend's era with a server/discover probe (docs/protocol.md §7).
	ProtocolAuto = "auto"
	// DefaultProtocol is used when UpstreamConfig.Protocol is empty.
	DefaultProtocol = ProtocolAuto
)

// Legacy revisions a backend may be pinned to; the first is offered in initialize under auto.
const (
	protocol20251125 = era.V20251125
	protocol20250618 = era.V20250618
	protocol20250326 = era.V20250326
)

// protocolChoices are the explicit values of UpstreamConfig.Protocol.
var protocolChoices = []string{ProtocolVersion, protocol20251125, protocol20250618, protocol20250326}

// ProtocolChoices are the values UpstreamConfig.Protocol takes: auto, then the revisions it can
// be pinned to.
func ProtocolChoices() []string { return append([]string{ProtocolAuto}, protocolChoices...) }

func validProtocol(p string) bool {
	return p == "" || p == ProtocolAuto || slices.Contains(protocolChoices, p)
}

// maxNameBytes bounds a backend name.
const maxNameBytes = 63

// validName checks the backend name syntax [a-z][a-z0-9-]{0,62}. It starts with a letter
// (narrower than a DNS label) because the name also becomes the first part of a URI scheme
// (RFC 3986 §3.1: a scheme starts with a letter), see namespace.go.
func validName(s string) bool {
	if len(s) == 0 || len(s) > maxNameBytes || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// validSeparator keeps namespaced names within the characters a tool name SHOULD use
// (docs/protocol.md §5.2: [A-Za-z0-9_.-]).
func validSeparator(s string) bool {
	if len(s) == 0 || len(s) > MaxSeparatorBytes {
		return false
	}
	for _, c := range []byte(s) {
		ok := (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// reservedHeader reports headers the forwarder sets itself; configuring them would break the
// protocol or the framing.
func reservedHeader(canonical string) bool {
	switch canonical {
	case "Accept", "Content-Type", "Content-Length", "Host", "Transfer-Encoding", "Connection",
		"Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Session-Id", "Last-Event-Id":
		return true
	}
	return false
}

// ErrInvalidConfig wraps every problem Config.Validate reports.
var ErrInvalidConfig = errors.New("upstreams: invalid config")

// Config is the backend part of the gateway configuration: the top-level `upstreams:` list and
// the `namespace:` block.
type Config struct {
	// Upstreams lists the backends in the order their items appear in merged lists. At least one.
	// Not read from YAML: the gateway's file form of each backend carries secrets, which it
	// resolves before filling this list.
	Upstreams []UpstreamConfig `yaml:"-"`
	// Namespace says how backend names are combined with tool, prompt and resource names.
	Namespace NamespaceConfig `yaml:"namespace"`
	// HealthInterval is the period of the server/discover health probe run by Registry.Run.
	// Zero means DefaultHealthInterval.
	HealthInterval time.Duration `yaml:"healthInterval"`
	// PageSize is the number of items per page of a merged list sent to the client.
	// Zero means DefaultPageSize; at most MaxPageSize. A cursor records the offset of the next
	// item, not a page number, so cursors stay valid across replicas (or restarts) with
	// different page sizes: the next page simply starts where the last one ended.
	PageSize int `yaml:"pageSize"`
	// Cache tunes the cache of backend list results (cache.go).
	Cache CacheConfig `yaml:"cache"`
	// RelayCapabilities names the backends' extensions and experimental capabilities the merged
	// server/discover passes on; none by default.
	RelayCapabilities RelayCapabilities `yaml:"relayCapabilities"`
}

// UpstreamConfig describes one backend MCP server.
type UpstreamConfig struct {
	// Name identifies the backend in namespaced names, URIs, logs and metric labels:
	// [a-z][a-z0-9-]{0,62}, unique.
	Name string `yaml:"name"`
	// URL is the backend's MCP endpoint, http or https. User info in it is never reported.
	URL string `yaml:"url"`
	// Timeout bounds a whole call, response stream included. Zero means DefaultTimeout.
	Timeout time.Duration `yaml:"timeout"`
	// ConnectTimeout bounds connecting (TCP and TLS). Zero means DefaultConnectTimeout.
	ConnectTimeout time.Duration `yaml:"connectTimeout"`
	// Headers are static headers sent on every request to this backend, typically its own
	// Authorization. Values are already resolved from secret files by the caller and are never
	// logged or reported; not read from YAML, where the values are secrets.
	Headers map[string]string `yaml:"-"`
	// Required makes a list fail when this backend fails; otherwise the backend is left out.
	Required bool `yaml:"required"`
	// MaxResponseBytes bounds a JSON response body and each SSE event from this backend.
	// Zero means DefaultMaxResponseBytes.
	MaxResponseBytes int64 `yaml:"maxResponseBytes"`
	// Protocol is the MCP revision spoken to this backend: "auto" (detect with a
	// server/discover probe, the default when empty), "2026-07-28" (always modern), or a
	// legacy revision offered in initialize: "2025-11-25", "2025-06-18" or "2025-03-26".
	Protocol string `yaml:"protocol"`
	// ResponseHeaderTimeout bounds the wait for the response headers of one request; once a
	// stream has started only Timeout applies. Zero means DefaultResponseHeaderTimeout.
	ResponseHeaderTimeout time.Duration `yaml:"responseHeaderTimeout"`
	// TLS sets the trust anchors and client certificate for an https backend (tls.go).
	TLS TLSConfig `yaml:"tls"`
	// Auth makes the gateway get an OAuth token for this backend (credentials.go); it
	// excludes a static Authorization header. Not read from YAML, where its client secret is a
	// secret the caller resolves.
	Auth AuthConfig `yaml:"-"`
	// Retry tunes the retries of requests that are safe to repeat (retry.go).
	Retry RetryConfig `yaml:"retry"`
	// Breaker tunes the circuit breaker (breaker.go).
	Breaker BreakerConfig `yaml:"breaker"`
}

// NamespaceConfig says how names are made unique across backends.
type NamespaceConfig struct {
	// Separator joins the backend name and the backend-side tool or prompt name, as in
	// github__create_issue. Empty means DefaultSeparator. Characters from [A-Za-z0-9_.-] only.
	Separator string `yaml:"separator"`
	// NoPrefix passes names and URIs through unchanged. Only valid with exactly one backend.
	NoPrefix bool `yaml:"noPrefix"`
}

// Validate reports every problem in c at once, each a *configerr.Error naming the setting's key
// path in the gateway's configuration file and matching ErrInvalidConfig; it changes nothing.
func (c *Config) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if len(c.Upstreams) == 0 {
		add("upstreams", "at least one upstream is required (a list of entries with name and url)")
	}
	if c.Namespace.NoPrefix && len(c.Upstreams) > 1 {
		add("namespace.noPrefix", "needs exactly one upstream, have %d", len(c.Upstreams))
	}
	sep := c.separator()
	if !validSeparator(sep) {
		add("namespace.separator", "%q: want 1 to %d characters from [A-Za-z0-9_.-]", sep, MaxSeparatorBytes)
	}
	if c.HealthInterval < 0 {
		add("healthInterval", "must not be negative")
	}
	if c.PageSize < 0 || c.PageSize > MaxPageSize {
		add("pageSize", "%d: want 0 (the default, %d) to %d", c.PageSize, DefaultPageSize, MaxPageSize)
	}
	errs = append(errs, c.Cache.validate()...)
	errs = append(errs, c.RelayCapabilities.validate()...)
	seen := make(map[string]int, len(c.Upstreams))
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		at := fmt.Sprintf("upstreams[%d]", i)
		errs = append(errs, configerr.Under(at, nil, u.validate()...)...)
		if first, dup := seen[u.Name]; dup {
			add(at+".name", "%q is also the name of upstreams[%d]; names are unique", u.Name, first)
		} else {
			seen[u.Name] = i
		}
	}
	if !c.Namespace.NoPrefix {
		for _, msg := range ambiguousNames(c.Upstreams, sep) {
			add("upstreams", "%s", msg)
		}
	}
	return errors.Join(configerr.Under("", ErrInvalidConfig, errs...)...)
}

// validate reports the problems of one backend, their paths relative to its entry.
func (u *UpstreamConfig) validate() []error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if !validName(u.Name) {
		add("name", "%q: want [a-z][a-z0-9-]{0,62} (lower-case letters, digits and -, starting with a letter)", u.Name)
	}
	if err := validateURL(u.URL); err != nil {
		add("url", "%v", err)
	}
	for _, f := range []struct {
		key string
		neg bool
	}{{"timeout", u.Timeout < 0}, {"connectTimeout", u.ConnectTimeout < 0}, {"maxResponseBytes", u.MaxResponseBytes < 0},
		{"responseHeaderTimeout", u.ResponseHeaderTimeout < 0}} {
		if f.neg {
			add(f.key, "must not be negative")
		}
	}
	if !validProtocol(u.Protocol) {
		add("protocol", "%q: want auto, %s", u.Protocol, strings.Join(protocolChoices, ", "))
	}
	for _, name := range sortedNames(u.Headers) {
		if err := validateHeader(name, u.Headers[name]); err != nil {
			add("headers."+name, "%v", err)
		}
	}
	errs = append(errs, configerr.Under("tls", nil, u.TLS.validate(u.URL)...)...)
	errs = append(errs, configerr.Under("auth", nil, u.Auth.validate(u.Headers)...)...)
	errs = append(errs, configerr.Under("retry", nil, u.Retry.validate()...)...)
	return append(errs, configerr.Under("breaker", nil, u.Breaker.validate()...)...)
}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func validateURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("does not parse as a URL") // url.Parse would quote it, credentials included
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("want an http or https URL of the backend's MCP endpoint")
	}
	if u.Host == "" || u.Fragment != "" {
		return errors.New("want an absolute URL with a host and no fragment")
	}
	return nil
}

func validateHeader(name, value string) error {
	if name == "" || strings.IndexFunc(name, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
		return fmt.Errorf("%q is not an HTTP header name (a token)", name)
	}
	canon := http.CanonicalHeaderKey(name)
	if reservedHeader(canon) {
		return fmt.Errorf("%s is set by the gateway and cannot be configured", canon)
	}
	if strings.HasPrefix(canon, "Mcp-") {
		return fmt.Errorf("%s: Mcp-* headers are protocol headers, set by the gateway", canon)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		// The value itself is a secret: name only the header.
		return errors.New("the value has a control character (CR, LF or NUL)")
	}
	return nil
}

func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// ambiguousNames finds pairs of backends where one name plus the separator is a prefix of the
// other's, for example "a" and "a-b" with separator "-": "a-b-x" could then be tool "b-x" of
// "a" or tool "x" of "a-b". Refusing such configurations keeps Resolve unambiguous.
func ambiguousNames(ups []UpstreamConfig, sep string) []string {
	var out []string
	for i := range ups {
		for j := range ups {
			a, b := ups[i].Name, ups[j].Name
			if i != j && a != b && strings.HasPrefix(b+sep, a+sep) {
				out = append(out, fmt.Sprintf("upstream names %q and %q are ambiguous with separator %q", a, b, sep))
			}
		}
	}
	return out
}

func (c *Config) separator() string {
	if c.Namespace.Separator == "" {
		return DefaultSeparator
	}
	return c.Namespace.Separator
}

func orDuration(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}
