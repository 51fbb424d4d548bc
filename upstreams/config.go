// Package upstreams holds the gateway's backends (docs/protocol.md §2, §5). Its Registry is the
// set of configured backends and the policy over them: it resolves a namespaced name to its
// backend and backend-side name, forwards a call to that one backend, fans server/discover and
// the health probes out to every backend and merges their answers. The rest lives in rooms, each a
// package that depends only on those below it:
//
//   - backend: one backend's behaviour (transport and TLS, credentials and token exchange,
//     retries, circuit breaker, health, the era probe and the bridge to a pre-2026 backend, its
//     server/discover answer, sending a request and relaying its Stream);
//   - catalog: the merged lists (fan-out, cache, cursors, pins, the tools' x-mcp-header bindings);
//   - listen: subscriptions/listen and its shared backend streams;
//   - names: backend names, namespaced names and backend-side names, and rewriting them;
//   - legacy, direct and internal/wire: the pre-2026 session client, the plain-http transport
//     and the wire helpers the others share.
//
// The Registry keeps one method per thing its callers ask (Call, List, Listen, ...) and this
// package names the rooms' types (Call, Stream, ListRequest, UpstreamConfig, ...), so callers
// import upstreams alone.
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
// request is built (backend.Backend.SubjectFor).
package upstreams

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/upstreams/catalog"
)

// Defaults for the configuration fields.
const (
	// DefaultSeparator joins the backend name and the backend's tool or prompt name.
	DefaultSeparator = "__"
	// DefaultHealthInterval is the period of the server/discover health probe.
	DefaultHealthInterval = 15 * time.Second
	// MinHealthInterval is the shortest health probe period accepted: every period probes every
	// backend.
	MinHealthInterval = time.Second
	// DefaultPageSize is the number of merged list items per page sent to the client.
	DefaultPageSize = catalog.DefaultPageSize
	// MaxSeparatorBytes bounds the separator so namespaced names stay short.
	MaxSeparatorBytes = 8
	// MaxPageSize bounds Config.PageSize.
	MaxPageSize = 1000
)

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
	// Zero means DefaultHealthInterval; otherwise at least MinHealthInterval (1s).
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
	// Apps is the gateway's handling of MCP Apps (SEP-1865, docs/apps.md).
	Apps AppsConfig `yaml:"apps"`
}

// AppsConfig is the gateway's handling of MCP Apps (SEP-1865): backends whose tools render an
// interactive UI (a ui:// resource) in the host. Their ui:// URIs are namespaced and their
// _meta.ui passed on whether or not it is enabled.
type AppsConfig struct {
	// Enabled makes the gateway act on the tools' _meta.ui.visibility: a tool only an app may
	// call (visibility ["app"]) is left out of tools/list, tool search and tool sets and refused
	// when called by its namespaced name, and a tools/call naming a backend's own tool, as an app
	// calls it, is routed to the one backend serving apps that has that tool (refused when two
	// have it). Off (the default): visibility passes to the host untouched, the host hides
	// app-only tools itself, and a backend's own tool names are unknown, as before.
	Enabled bool `yaml:"enabled"`
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
	} else if c.HealthInterval > 0 && c.HealthInterval < MinHealthInterval {
		// Each interval probes every backend: a shorter one is a storm the gateway makes itself.
		add("healthInterval", "%v: want 0 (the default, %v) or at least %v", c.HealthInterval, DefaultHealthInterval, MinHealthInterval)
	}
	if c.PageSize < 0 || c.PageSize > MaxPageSize {
		add("pageSize", "%d: want 0 (the default, %d) to %d", c.PageSize, DefaultPageSize, MaxPageSize)
	}
	errs = append(errs, c.Cache.Problems()...)
	errs = append(errs, c.RelayCapabilities.validate()...)
	seen := make(map[string]int, len(c.Upstreams))
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		at := fmt.Sprintf("upstreams[%d]", i)
		errs = append(errs, configerr.Under(at, nil, u.Problems()...)...)
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

func (c *Config) separator() string { return c.Namespace.SeparatorOrDefault() }

// SeparatorOrDefault is the separator names are joined with: Separator, or DefaultSeparator
// when it is empty.
func (n NamespaceConfig) SeparatorOrDefault() string {
	if n.Separator == "" {
		return DefaultSeparator
	}
	return n.Separator
}
