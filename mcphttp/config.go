package mcphttp

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/clientaddr"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/webpage"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Defaults for Config.
const (
	DefaultPath         = "/mcp"
	DefaultMaxBodyBytes = 4 << 20
	// DefaultBodyReadTimeout bounds the time to receive a request body: generous for a few
	// megabytes on a slow link, short enough that a trickled body cannot hold its memory long.
	DefaultBodyReadTimeout = 10 * time.Second
	// DefaultMaxBodyBytesInFlight bounds the memory of request bodies being received or
	// served on a replica, charged as bytes arrive.
	DefaultMaxBodyBytesInFlight = 64 << 20
	// DefaultWriteTimeout is the time every response write is given, plus the time its size
	// takes at the minimum write rate.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultMinWriteRate is the slowest reading client a write waits for, in bytes per
	// second: a 15 MB result gets DefaultWriteTimeout plus 57 s.
	DefaultMinWriteRate = 256 << 10
	// ProtocolVersion is the one MCP revision the client-facing side speaks (docs/architecture.md).
	ProtocolVersion = "2026-07-28"
)

// DefaultSSEKeepAlive is how long a response may stay silent before the gateway writes an SSE
// comment: well under the 60 s idle timeout common in load balancers and ingress proxies.
const DefaultSSEKeepAlive = 15 * time.Second

// Config is the client-facing HTTP configuration (the `server:` block, less what cmd/gateway
// uses to listen).
type Config struct {
	// Path is the MCP endpoint path, written as every client sends it: letters, digits and
	// -._~!$&'()+,;=@, no empty or dot segment (PathProblem). Default DefaultPath.
	Path string `yaml:"path"`
	// PublicURL is the canonical URL clients use for the MCP endpoint, e.g.
	// https://mcp.example.com/mcp. It is the OAuth resource identifier (RFC 8707) and locates the
	// protected resource metadata. Required when authentication is on.
	PublicURL string `yaml:"publicURL"`
	// MaxBodyBytes bounds a request body; larger bodies get 413. Default DefaultMaxBodyBytes.
	MaxBodyBytes int64 `yaml:"maxBodyBytes"`
	// AllowedOrigins lists browser origins (scheme://host[:port]) allowed to call the endpoint,
	// besides the public URL's own origin. "*" allows any. A request with another Origin gets 403.
	// A page of a listed origin gets CORS: its preflight is answered and it may read the answers.
	AllowedOrigins []string `yaml:"allowedOrigins"`
	// MaxJSONDepth bounds the nesting of a request body. Default jsonrpc.DefaultMaxDepth.
	MaxJSONDepth int `yaml:"maxJSONDepth"`
	// MaxJSONTokenBytes bounds one JSON string or number. Default jsonrpc.DefaultMaxTokenBytes.
	MaxJSONTokenBytes int `yaml:"maxJSONTokenBytes"`
	// SSEKeepAlive is how long a forwarded call or a listen may stay silent before the gateway
	// writes an SSE comment (switching the response to SSE if needed). Default
	// DefaultSSEKeepAlive; negative disables.
	SSEKeepAlive time.Duration `yaml:"sseKeepAlive"`
	// ConfirmDestructiveTools asks the user to confirm every call of a tool whose annotations
	// declare destructiveHint: true, as if a policy rule said confirm. The annotations are read
	// from the tool's entry in its backend's tools/list as the caller is shown it (the list the
	// call's name is checked against, refreshed as that list is), so a backend showing callers
	// different lists is judged on the caller's own. Default false.
	ConfirmDestructiveTools bool `yaml:"confirmDestructiveTools"`
	// BodyReadTimeout bounds the time from the start of the request's handling to the last
	// byte of its body; a body still arriving then is answered 408 and its connection closed.
	// It holds for every route of both listeners, whether the route reads the body or not: a
	// request refused unread is answered once its body has ended or this time has passed.
	// Default DefaultBodyReadTimeout; negative disables.
	BodyReadTimeout time.Duration `yaml:"bodyReadTimeout"`
	// MaxBodyBytesInFlight bounds the buffer memory of all request bodies held at once on this
	// replica, authenticated or not, charged as their bytes arrive (never from a declared
	// Content-Length); a body that would pass it gets 503 with Retry-After. It must be at
	// least twice MaxBodyBytes. Default DefaultMaxBodyBytesInFlight or four times
	// MaxBodyBytes, whichever is larger; negative disables.
	MaxBodyBytesInFlight int64 `yaml:"maxBodyBytesInFlight"`
	// WriteTimeout bounds every write of a response: a JSON response must be taken by the
	// client within WriteTimeout plus its size at MinWriteRate, and so must each SSE event
	// and keep-alive, the deadline moving on with every write that succeeds. A client that
	// does not read in time has its connection closed and its backend call cancelled. Default
	// DefaultWriteTimeout; negative disables.
	WriteTimeout time.Duration `yaml:"writeTimeout"`
	// MinWriteRate is the slowest client WriteTimeout allows for, in bytes per second.
	// Default DefaultMinWriteRate.
	MinWriteRate int64 `yaml:"minWriteRate"`
	// MaxResultBytesInFlight bounds the buffer memory of backend responses being relayed at
	// once on this replica (upstreams.Options.MaxResultBytesInFlight); a response that would
	// pass it fails with -32014 and 503. One caller's (without authentication, one client
	// address's) responses hold at most an eighth of it, and at least three times the largest
	// upstreams[].maxResponseBytes; past that share its call fails with -32012 and 429, its own
	// limit. Listens' queued notifications and backend listen
	// streams count against it too, at most half of it, one caller's listens a sixteenth
	// (docs/limits.md). Default upstreams.DefaultMaxResultBytesInFlight; negative disables.
	MaxResultBytesInFlight int64 `yaml:"maxResultBytesInFlight"`
	// MaxInterceptorAnswerBytesInFlight bounds the buffer memory of interceptors' answers being
	// read at once on this replica; one caller's (without authentication, one client address's)
	// answers hold at most an eighth of it, past which its invocation fails (reason
	// caller_share), so that several callers cannot take what another's answers are read within
	// (docs/limits.md). At least 24 times the largest interceptors[].maxResponseBytes: eight
	// shares, each holding one answer while it is read. Default 64 MiB or that least, whichever
	// is more (192 MiB with the default maxResponseBytes).
	MaxInterceptorAnswerBytesInFlight int64 `yaml:"maxInterceptorAnswerBytesInFlight"`
	// MaxConcurrent bounds requests in flight on this replica; more get 503 with Retry-After.
	// Default DefaultMaxConcurrent; negative disables.
	MaxConcurrent int `yaml:"maxConcurrent"`
	// MaxConcurrentPerCaller bounds one caller's requests in flight on this replica (without
	// authentication, one client address's: docs/client-bounds.md); more get 429 with
	// Retry-After. Default DefaultMaxConcurrentPerCaller; negative disables.
	MaxConcurrentPerCaller int `yaml:"maxConcurrentPerCaller"`
	// MaxListensPerCaller bounds one caller's (without authentication, one client address's)
	// open subscriptions/listen streams on this replica, a pre-2026 client's GET streams included: each keeps its subscriptions
	// and a queue for as long as the caller's token lasts, and counts against
	// MaxConcurrentPerCaller too. More are refused with 429 (-32012). Default
	// DefaultMaxListensPerCaller; negative disables.
	MaxListensPerCaller int `yaml:"maxListensPerCaller"`
	// Search is the search mode of the default endpoint (docs/toolsets.md). Off by default.
	Search SearchConfig `yaml:"search"`
	// DraftErrors turns on error shapes of MCP drafts that are not part of 2026-07-28 yet
	// (docs/denials.md): "denials" (SEP-2643: authorization denials carry
	// _meta["io.modelcontextprotocol/authorization"]) and "rateLimited" (SEP-3304: a limited
	// caller gets -32023 with data.retryAfterMs). Empty (the default): neither, and nothing on
	// the wire differs from a gateway without the setting.
	DraftErrors []string `yaml:"draftErrors"`
	// ServerCard serves the endpoints' Server Cards and the AI Catalog (SEP-2127, a draft;
	// docs/server-card.md). Off by default.
	ServerCard ServerCardConfig `yaml:"serverCard"`
	// TrustedProxies are the CIDRs (or single addresses) of the proxies and load balancers in
	// front of the gateway, whose ClientAddressHeader names the client. Empty (the default):
	// the TCP peer is the client and no header is read. A header from a peer not listed is
	// never read (docs/deploy.md, "Behind a load balancer").
	TrustedProxies []string `yaml:"trustedProxies"`
	// ClientAddressHeader is the header the trusted proxies name the client in:
	// X-Forwarded-For (the default) or Forwarded (RFC 7239). It is walked from right to left;
	// the first address not in TrustedProxies is the client.
	ClientAddressHeader string `yaml:"clientAddressHeader"`
	// ClientIPv6Prefix is the prefix length IPv6 clients are bounded by (IPv4 clients by
	// their address): a subscriber usually holds a whole /64. Default 64.
	ClientIPv6Prefix int `yaml:"clientIPv6Prefix"`
	// PerClient bounds the work one client address makes a replica do before it is
	// authenticated (docs/limits.md).
	PerClient PerClientConfig `yaml:"perClient"`
	// LogClientAddress writes the client's address (as TrustedProxies find it) in each access
	// log line's client attribute. Off by default: an address is personal data in some
	// jurisdictions.
	LogClientAddress bool `yaml:"logClientAddress"`
	// Toolsets are the tool sets, each served at its own path (the top-level toolsets: block,
	// which cmd/gateway copies here).
	Toolsets []ToolsetConfig `yaml:"-"`
}

// PerClientConfig bounds each client address's work before authentication, per replica.
type PerClientConfig struct {
	// MaxUnauthenticated bounds one client address's requests in flight before their caller
	// is authenticated (a body still arriving, a token being checked) and its requests to
	// routes that take no token (metadata, approval and connect pages); more get 429 with
	// Retry-After. Default 64; negative disables.
	MaxUnauthenticated int `yaml:"maxUnauthenticated"`
	// FailedAuthPerMinute is the rate at which one client address earns back failed
	// authentications (a token with a bad signature, an unknown key, expired, for another
	// audience...). Past it, the address's tokens are accepted only if verified before; others
	// get 429 with Retry-After, unchecked. Default 30; negative disables.
	FailedAuthPerMinute int `yaml:"failedAuthPerMinute"`
	// FailedAuthBurst is how many failed authentications one client address may have in a row
	// before FailedAuthPerMinute applies. Default 30.
	FailedAuthBurst int `yaml:"failedAuthBurst"`
	// MaxTracked bounds the client addresses a replica keeps state for (at most 320 bytes
	// each), the least recently seen forgotten first. Default 65536.
	MaxTracked int `yaml:"maxTracked"`
	// MaxBodyBytesInFlight is one client address's share of server.maxBodyBytesInFlight: the
	// bodies of its requests not authenticated yet, charged as their bytes arrive; past it
	// its next body gets 429 with Retry-After. At least twice server.maxBodyBytes. Default a
	// quarter of server.maxBodyBytesInFlight, or twice server.maxBodyBytes if that is more;
	// negative disables. Needs maxUnauthenticated.
	MaxBodyBytesInFlight int64 `yaml:"maxBodyBytesInFlight"`
}

// limiterConfig is c as the limiter takes it, defaults applied.
func (c PerClientConfig) limiterConfig() clientaddr.LimiterConfig {
	return clientaddr.LimiterConfig{MaxUnauthenticated: c.MaxUnauthenticated,
		FailedAuthPerMinute: c.FailedAuthPerMinute, FailedAuthBurst: c.FailedAuthBurst,
		MaxTracked: c.MaxTracked, MaxBodyBytes: c.MaxBodyBytesInFlight}.WithDefaults()
}

func (c Config) resolverConfig() clientaddr.Config {
	return clientaddr.Config{TrustedProxies: c.TrustedProxies, Header: c.ClientAddressHeader,
		IPv6PrefixBits: c.ClientIPv6Prefix}
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.BodyReadTimeout == 0 {
		c.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if c.MaxBodyBytesInFlight == 0 {
		// Room for a few of the largest bodies whatever maxBodyBytes is.
		c.MaxBodyBytesInFlight = max(DefaultMaxBodyBytesInFlight, 4*c.MaxBodyBytes)
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.MinWriteRate <= 0 {
		c.MinWriteRate = DefaultMinWriteRate
	}
	if c.MaxResultBytesInFlight == 0 {
		c.MaxResultBytesInFlight = upstreams.DefaultMaxResultBytesInFlight
	}
	if c.SSEKeepAlive == 0 {
		c.SSEKeepAlive = DefaultSSEKeepAlive
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.MaxConcurrentPerCaller == 0 {
		c.MaxConcurrentPerCaller = DefaultMaxConcurrentPerCaller
	}
	if c.MaxListensPerCaller == 0 {
		c.MaxListensPerCaller = DefaultMaxListensPerCaller
	}
	if c.ClientAddressHeader == "" {
		c.ClientAddressHeader = clientaddr.HeaderXForwardedFor
	}
	if c.ClientIPv6Prefix == 0 {
		c.ClientIPv6Prefix = clientaddr.DefaultIPv6PrefixBits
	}
	lc := c.PerClient.limiterConfig()
	c.PerClient = PerClientConfig{MaxUnauthenticated: lc.MaxUnauthenticated,
		FailedAuthPerMinute: lc.FailedAuthPerMinute, FailedAuthBurst: lc.FailedAuthBurst, MaxTracked: lc.MaxTracked,
		MaxBodyBytesInFlight: c.PerClient.MaxBodyBytesInFlight}
	if c.PerClient.MaxBodyBytesInFlight == 0 && c.MaxBodyBytesInFlight > 0 {
		// A quarter: four clients trickling bodies cannot fill the replica's budget alone. The
		// same share as an authenticated caller's (callerBodyShare).
		c.PerClient.MaxBodyBytesInFlight = callerBodyShare(c)
	}
	return c
}

// PathProblem says why p, a path the gateway serves as configured, is not one every client
// sends as written; "" when it is. The gateway routes the bytes of the request line, while
// clients and proxies rewrite some paths: a WHATWG URL parser (browsers, Node's fetch) removes
// dot segments where Go's does not, a proxy may decode a percent-escape or encode a character
// that needs one, and non-ASCII text is sent percent-encoded. A path one client rewrites and
// another does not is reached by some clients and not others, and its published URL (in the
// protected resource metadata, a Server Card, as DPoP's htu) names another path to them. So a
// path holds only the characters RFC 3986 lets a path hold unescaped, and no empty or dot
// segment (a trailing slash excepted).
func PathProblem(p string) string {
	segments := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, seg := range segments {
		switch {
		case seg == "" && i < len(segments)-1:
			return "want no empty segment (//): clients and proxies may merge it"
		case seg == "." || seg == "..":
			return "want no dot segment (. or ..): clients remove it before sending"
		}
	}
	if i := strings.IndexFunc(p, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/-._~!$&'()+,;=@", r))
	}); i >= 0 {
		return fmt.Sprintf("want letters, digits and -._~!$&'()+,;=@ only, not %q: clients send it escaped or rewrite it", []rune(p[i:])[0])
	}
	return ""
}

// Validate reports every problem in c, each a *configerr.Error naming the setting's key path
// in the gateway's configuration file (server.path, legacy.versions, toolsets[0].name).
func (c Config) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if c.Path != "" && (!strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, "?#*:")) {
		add("server.path", "%q: want an absolute path without query, wildcards or parameters", c.Path)
	} else if why := PathProblem(c.Path); why != "" {
		add("server.path", "%q: %s", c.Path, why)
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		switch {
		case err != nil:
			add("server.publicURL", "does not parse as a URL")
		case u.Scheme != "https" && u.Scheme != "http", u.Host == "", u.Fragment != "":
			add("server.publicURL", "%q: want an absolute http(s) URL without fragment, such as https://mcp.example.com/mcp", c.PublicURL)
		case u.User != nil:
			// Every client reads it, unauthenticated: in the protected resource metadata and in
			// each 401 challenge.
			add("server.publicURL", "%q: want a URL with no user information: clients are told this URL before they sign in",
				configerr.URL(c.PublicURL))
		}
	}
	if c.MaxBodyBytes < 0 {
		add("server.maxBodyBytes", "must not be negative")
	}
	for i, o := range c.AllowedOrigins {
		if o == "*" {
			continue
		}
		if !listableOrigin(o) {
			add(fmt.Sprintf("server.allowedOrigins[%d]", i), "%q: want an origin, scheme://host[:port], or \"*\"", o)
		}
	}
	if c.MaxBodyBytesInFlight > 0 && c.MaxBodyBytesInFlight < 2*c.MaxBodyBytes {
		// A buffer doubles as a body arrives, so a body of maxBodyBytes briefly holds 1.5 times
		// its size.
		add("server.maxBodyBytesInFlight", "must be at least twice server.maxBodyBytes, or a large body could never be received")
	}
	if c.MaxJSONDepth < 0 {
		add("server.maxJSONDepth", "must not be negative")
	}
	if c.MaxJSONTokenBytes < 0 {
		add("server.maxJSONTokenBytes", "must not be negative")
	}
	errs = append(errs, c.validateClients()...)
	errs = append(errs, c.validateToolsets())
	errs = append(errs, validateDraftErrors(c.DraftErrors)...)
	errs = append(errs, c.ServerCard.validate(c.PublicURL)...)
	return errors.Join(errs...)
}

// listableOrigin reports whether o is an origin alone, which an Origin header can name: an
// entry with user information, a path, a query or a fragment, or an http(s) one no browser
// serialises (a port out of range, a zoned address), would never match one.
func listableOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil || strings.ContainsAny(o, "?#") {
		return false
	}
	_, ok := webpage.SerialisedOrigin(o)
	return ok || !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")
}

// validateClients checks the trusted proxies and the per-client bounds, each problem under its
// key path.
func (c Config) validateClients() []error {
	var errs []error
	problems := c.resolverConfig().Validate()
	for _, k := range slices.Sorted(maps.Keys(problems)) {
		errs = append(errs, configerr.At("server."+k, "%v", problems[k]))
	}
	if c.PerClient.FailedAuthBurst < 0 {
		errs = append(errs, configerr.At("server.perClient.failedAuthBurst", "must not be negative"))
	}
	if n := c.PerClient.MaxBodyBytesInFlight; n > 0 && n < 2*c.MaxBodyBytes {
		errs = append(errs, configerr.At("server.perClient.maxBodyBytesInFlight",
			"must be at least twice server.maxBodyBytes, or a large body could never be received"))
	}
	if c.PerClient.MaxTracked < 0 {
		errs = append(errs, configerr.At("server.perClient.maxTracked", "must not be negative"))
	}
	return errs
}

func (c Config) limits() jsonrpc.Limits {
	return jsonrpc.Limits{MaxDepth: c.MaxJSONDepth, MaxTokenBytes: c.MaxJSONTokenBytes}
}
