package backend

import (
	"encoding/base64"
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

// ProtocolVersion is the MCP revision the gateway speaks to modern backends.
const ProtocolVersion = "2026-07-28"

// Defaults for the configuration fields.
const (
	// DefaultTimeout bounds a whole call to a backend; long tool calls are legitimate.
	DefaultTimeout = 60 * time.Second
	// DefaultConnectTimeout bounds the TCP connect and the TLS handshake.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultMaxResponseBytes bounds a JSON response body and each SSE event.
	DefaultMaxResponseBytes = 16 << 20
	// DefaultMaxNotificationsPerCall bounds the notifications (progress, log messages) relayed
	// to the client for one call: a progress notification every 100 ms for the whole default
	// timeout is 600.
	DefaultMaxNotificationsPerCall = 1000
	// DefaultIdleConnTimeout is how long a pooled connection to a backend stays open unused:
	// below the 5 s after which the servers MCP backends commonly run on (Node's http.Server,
	// uvicorn) close an idle connection.
	DefaultIdleConnTimeout = 4 * time.Second
)

// Values of Config.Protocol besides the legacy revisions in protocolChoices.
const (
	// ProtocolAuto detects the backend's era with a server/discover probe (docs/protocol.md §7).
	ProtocolAuto = "auto"
	// DefaultProtocol is used when Config.Protocol is empty.
	DefaultProtocol = ProtocolAuto
)

// Legacy revisions a backend may be pinned to; the first is offered in initialize under auto.
const (
	protocol20251125 = era.V20251125
	protocol20250618 = era.V20250618
	protocol20250326 = era.V20250326
)

// protocolChoices are the explicit values of Config.Protocol.
var protocolChoices = []string{ProtocolVersion, protocol20251125, protocol20250618, protocol20250326}

// ProtocolChoices are the values Config.Protocol takes: auto, then the revisions it can be
// pinned to.
func ProtocolChoices() []string { return append([]string{ProtocolAuto}, protocolChoices...) }

func validProtocol(p string) bool {
	return p == "" || p == ProtocolAuto || slices.Contains(protocolChoices, p)
}

// maxNameBytes bounds a backend name.
const maxNameBytes = 63

// validName checks the backend name syntax [a-z][a-z0-9-]{0,62}. It starts with a letter
// (narrower than a DNS label) because the name also becomes the first part of a URI scheme
// (RFC 3986 §3.1: a scheme starts with a letter), see package names.
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

// Config describes one backend MCP server (an entry of the gateway's `upstreams:` list).
type Config struct {
	// Name identifies the backend in namespaced names, URIs, logs and metric labels:
	// [a-z][a-z0-9-]{0,62}, unique.
	Name string `yaml:"name"`
	// URL is the backend's MCP endpoint, http or https. User info in it is sent as Basic
	// Authorization on every request (it excludes auth and an Authorization header) and is
	// never reported.
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
	// MaxNotificationsPerCall bounds the notifications (progress, log messages) relayed to the
	// client before one call's response; the backend's further ones are read and dropped (and
	// counted), the call goes on. Zero means DefaultMaxNotificationsPerCall.
	MaxNotificationsPerCall int `yaml:"maxNotificationsPerCall"`
	// Protocol is the MCP revision spoken to this backend: "auto" (detect with a
	// server/discover probe, the default when empty), "2026-07-28" (always modern), or a
	// legacy revision offered in initialize: "2025-11-25", "2025-06-18" or "2025-03-26".
	Protocol string `yaml:"protocol"`
	// IdleConnTimeout is how long a pooled connection to this backend stays open unused before
	// the gateway closes it. Set it below the idle timeout of the backend and of every proxy or
	// load balancer in front of it: a tools/call written to a connection the other side is
	// closing fails and, once a byte of it was sent, is never retried. Zero means
	// DefaultIdleConnTimeout.
	IdleConnTimeout time.Duration `yaml:"idleConnTimeout"`
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

// Problems reports every problem of one backend's configuration, each a *configerr.Error whose
// key path is relative to its entry (the caller places it under the entry's path); it changes
// nothing. Whether the name is unique among the backends is the caller's to check.
func (u *Config) Problems() []error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if !validName(u.Name) {
		add("name", "%q: want [a-z][a-z0-9-]{0,62} (lower-case letters, digits and -, starting with a letter)", u.Name)
	}
	if err := validateURL(u.URL); err != nil {
		add("url", "%v", err)
	}
	if userInfoAuth(u.URL) != "" && (hasHeader(u.Headers, "Authorization") || u.Auth.Type != "") {
		add("url", "user information (sent as Basic Authorization) excludes auth and an Authorization header")
	}
	for _, f := range []struct {
		key string
		neg bool
	}{{"timeout", u.Timeout < 0}, {"connectTimeout", u.ConnectTimeout < 0}, {"maxResponseBytes", u.MaxResponseBytes < 0},
		{"responseHeaderTimeout", u.ResponseHeaderTimeout < 0}, {"maxNotificationsPerCall", u.MaxNotificationsPerCall < 0},
		{"idleConnTimeout", u.IdleConnTimeout < 0}} {
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

// userInfoAuth is the Basic Authorization a URL's user information stands for (RFC 7617),
// "" for a URL without it.
func userInfoAuth(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
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

// hasHeader reports whether headers set the header name (canonical), however spelt.
func hasHeader(headers map[string]string, name string) bool {
	for k := range headers {
		if http.CanonicalHeaderKey(k) == name {
			return true
		}
	}
	return false
}

func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

func orDuration(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}
