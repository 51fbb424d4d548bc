package gateway

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/loopback"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/mcphttp/pre2026"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Defaults for the process-level settings. The admin listener (metrics, health and the policy
// explainer) is loopback-only unless the operator opens it on purpose, as the Helm chart does
// for probes and Prometheus.
const (
	defaultListen          = ":8080"
	defaultAdminListen     = "127.0.0.1:9090"
	defaultLogLevel        = "info"
	defaultLogFormat       = "json"
	defaultDrainDelay      = 10 * time.Second
	defaultShutdownTimeout = 30 * time.Second
	defaultReadHeader      = 10 * time.Second
	defaultIdleTimeout     = 120 * time.Second
	defaultMaxHeaderBytes  = 64 << 10
)

// Config is the whole gateway configuration: the YAML file, then MCPGW_* environment variables,
// then flags. Each package owns its block; this type only assembles them.
type Config struct {
	// Server is the MCP listener and endpoint: address, public URL, TLS, request limits and
	// timeouts, draining.
	Server ServerConfig `yaml:"server"`
	// Admin is the admin listener: metrics, health, readiness, pprof and the policy explainer.
	Admin AdminConfig `yaml:"admin"`
	// Log selects the log level and format.
	Log LogConfig `yaml:"log"`
	// Auth is authentication (the trusted token issuers) and authorization (the policy rules).
	Auth AuthConfig `yaml:"auth"`
	// MRTR holds the keys that seal requestState, list cursors and pre-2026 session ids, and
	// how long a requestState stays valid.
	MRTR MRTRConfig `yaml:"mrtr"`
	// Redis is the shared store every replica uses; absent, an in-memory store correct for one
	// replica only.
	Redis RedisConfig `yaml:"redis"`
	// RateLimit is the per-caller limit and what limits do when the store cannot answer.
	RateLimit RateLimitConfig `yaml:"rateLimit"`
	// Config is the backend settings at the top level (namespace, healthInterval, pageSize,
	// cache, relayCapabilities), as upstreams defines them. Its list of backends is filled from
	// Upstreams, once their secrets are resolved (upstreamsConfig); do not call its Validate,
	// validate checks it with the rest.
	upstreams.Config `yaml:",inline"`
	// Upstreams are the backends in their file form, with secrets.
	Upstreams []UpstreamConfig `yaml:"upstreams"`
	// Tracing exports OpenTelemetry spans over OTLP/HTTP; off unless an endpoint is set.
	Tracing TracingConfig `yaml:"tracing"`
	// Toolsets are curated tool sets, each served as an MCP endpoint at its own path
	// (docs/toolsets.md); mcphttp serves them, from Server.Toolsets.
	Toolsets []mcphttp.ToolsetConfig `yaml:"toolsets"`
	// Approval is the page `confirm: url` rules send users to; off unless a client id is set.
	Approval ApprovalConfig `yaml:"approval"`
	// Pins turns tool-definition pinning on (docs/pinning.md); absent, nothing is pinned.
	Pins *pins.Config `yaml:"pins"`
	// UserOAuth is the connect pages and token vault of backends whose callers connect their
	// own accounts (auth.type userOAuth, docs/user-oauth.md).
	UserOAuth UserOAuthConfig `yaml:"userOAuth"`
	// Legacy serves pre-2026 clients (2025-11-25, 2025-06-18, 2025-03-26) on the MCP endpoint, as
	// pre2026.Config defines it; on by default.
	Legacy pre2026.Config `yaml:"legacy"`
	// Interceptors are out-of-process interceptors of calls (docs/interceptors.md): SEP-2624
	// Interceptor Servers or webhooks, each with the rules that select the calls it governs.
	// None by default.
	Interceptors []InterceptorConfig `yaml:"interceptors"`
	// Guardrails are the built-in content guardrails (docs/guardrails.md): schema validation,
	// secrets, personal data and injection markers, per rule. No rules: none runs.
	Guardrails guardrails.Config `yaml:"guardrails"`
	// Search is what tool search shares across its endpoints: an optional embeddings endpoint
	// (docs/search.md). Off by default.
	Search SearchConfig `yaml:"search"`

	// forceNoAuth is --force: allow auth.disabled on a non-loopback listener.
	forceNoAuth bool
	// version is the build's version (Run's), for logs, serverInfo and build_info; "" reads
	// as "dev".
	version string
	// src is where the settings were read from, to locate a problem in the file.
	src source
}

// ServerConfig is the MCP listener: where it listens and how it drains, plus the endpoint
// settings mcphttp owns.
type ServerConfig struct {
	mcphttp.Config `yaml:",inline"`
	// Listen is the MCP listener's address. Default ":8080".
	Listen string `yaml:"listen"`
	// TLS, when both files are set, makes the listener terminate HTTPS itself.
	TLS TLSConfig `yaml:"tls"`
	// DrainDelay is how long the gateway keeps serving, reported not-ready, after SIGTERM before
	// it stops accepting connections: longer than the load balancer needs to notice. Default 10s
	// when absent; 0s turns the delay off (no load balancer in front).
	DrainDelay time.Duration `yaml:"drainDelay"`
	// ShutdownTimeout bounds how long in-flight requests (SSE streams included) may take to
	// finish once the listener stops accepting. Default 30s.
	ShutdownTimeout time.Duration `yaml:"shutdownTimeout"`
	// ReadHeaderTimeout bounds reading request headers. Default 10s.
	ReadHeaderTimeout time.Duration `yaml:"readHeaderTimeout"`
	// IdleTimeout closes idle keep-alive connections. Default 120s.
	IdleTimeout time.Duration `yaml:"idleTimeout"`
	// MaxHeaderBytes bounds request headers. Default 64 KiB.
	MaxHeaderBytes int `yaml:"maxHeaderBytes"`
}

// TLSConfig names the certificate and key files of the MCP listener.
type TLSConfig struct {
	// CertFile is a PEM certificate chain.
	CertFile string `yaml:"certFile"`
	// KeyFile is the PEM private key.
	KeyFile string `yaml:"keyFile"`
}

// AdminConfig is the admin listener (metrics, health, readiness).
type AdminConfig struct {
	// Listen is the admin listener's address. Default "127.0.0.1:9090" (loopback only); set
	// ":9090" to let probes and Prometheus reach it from outside the host or pod.
	Listen string `yaml:"listen"`
	// Pprof mounts /debug/pprof/ on the admin listener. Default false. Only on a loopback-only
	// listener: a profile runs as long as asked and exposes the process's internals.
	Pprof bool `yaml:"pprof"`
	// Token is the admin credential (file, env or value; at least 32 characters), sent as
	// "Authorization: Bearer <token>". Every admin endpoint but /healthz and the bare status of
	// /readyz requires it: /metrics, /pins, the detail of /readyz, /authz/explain, pprof.
	// Required when Listen is not loopback-only; optional (and then enforced) on loopback.
	Token Secret `yaml:"token"`
	// RedisReadiness says what an unreachable Redis does to /readyz: "required" (the default)
	// makes the replica not ready; "advisory" reports the failing check and keeps it ready, so
	// a Redis outage, which every replica shares, does not take them all out of the load
	// balancer while calls that need no shared state could still be served.
	RedisReadiness string `yaml:"redisReadiness"`
	// Explain controls POST /authz/explain, which reveals the whole policy and the claims of
	// any token sent to it.
	Explain ExplainConfig `yaml:"explain"`
}

// ExplainConfig switches the admin policy explainer on and protects it.
type ExplainConfig struct {
	// Enabled mounts POST /authz/explain. Default false.
	Enabled bool `yaml:"enabled"`
	// Secret, when set, must be sent as "Authorization: Bearer <secret>". Required when the
	// explainer is enabled on an admin listener that is not loopback-only.
	Secret Secret `yaml:"secret"`
}

// Values of AdminConfig.RedisReadiness.
const (
	redisReadinessRequired = "required"
	redisReadinessAdvisory = "advisory"
)

// logLevels and logFormats are the values LogConfig's settings take.
func logLevels() []string  { return []string{"debug", "info", "warn", "error"} }
func logFormats() []string { return []string{"json", "text"} }

// orList writes "a, b or c".
func orList(v []string) string {
	if len(v) < 2 {
		return strings.Join(v, "")
	}
	return strings.Join(v[:len(v)-1], ", ") + " or " + v[len(v)-1]
}

// LogConfig selects the log level and format.
type LogConfig struct {
	// Level is debug, info, warn or error. Default info.
	Level string `yaml:"level"`
	// Format is json or text. Default json.
	Format string `yaml:"format"`
}

// AuthConfig is the authentication and authorization block: authz.Config plus the switch that
// turns it off.
type AuthConfig struct {
	authz.Config `yaml:",inline"`
	// Disabled serves without authentication: for local development only. It is refused on a
	// non-loopback listener unless --force is given, and logged loudly.
	Disabled bool `yaml:"disabled"`
}

// UpstreamConfig is one backend as written in the file: every setting of
// upstreams.UpstreamConfig, with the header values and the OAuth client secret given as secrets
// (file, env or value) instead of resolved strings. The embedded Headers and Auth are filled only
// when the secrets are resolved (upstreamsConfig).
type UpstreamConfig struct {
	upstreams.UpstreamConfig `yaml:",inline"`
	// Headers are static headers sent on every request to this backend; each value is a secret.
	Headers map[string]Secret `yaml:"headers"`
	// Auth makes the gateway get an OAuth token for this backend.
	Auth UpstreamAuth `yaml:"auth"`
	// CaseInsensitivePaths says the backend's resource URIs name paths it compares without
	// regard to case (files on macOS or Windows): policy rules, tool sets, interceptor and
	// guardrail rules then match its resource URIs case-folded (Unicode simple case folding), so a deny of file:///srv/secret/** also hides
	// file:///SRV/Secret/x, and an allow grants every case variant of what it names. Default
	// false: URIs are compared exactly, which on such a backend lets a case variant pass a deny.
	CaseInsensitivePaths bool `yaml:"caseInsensitivePaths"`
	// SamplingContext trusts this backend with sampling context: the clientCapabilities it
	// receives keep sampling.context, and its sampling requests reach the client with
	// includeContext "thisServer" or "allServers" as it wrote them. Behind the gateway the
	// client's server is every backend at once, so such a request has the client's model read
	// what the client exchanged with every other backend, and its reply goes to this one. Default
	// false: the gateway declares no sampling.context to the backend and sends its sampling
	// requests to the client with includeContext "none".
	SamplingContext bool `yaml:"samplingContext"`
}

// samplingContextUpstreams names the backends of ups trusted with sampling context.
func samplingContextUpstreams(ups []UpstreamConfig) []string {
	return upstreamsWhere(ups, func(u *UpstreamConfig) bool { return u.SamplingContext })
}

// caseInsensitiveUpstreams names the backends of ups whose resource paths are case-insensitive.
func caseInsensitiveUpstreams(ups []UpstreamConfig) []string {
	return upstreamsWhere(ups, func(u *UpstreamConfig) bool { return u.CaseInsensitivePaths })
}

// upstreamsWhere names the backends of ups for which is holds.
func upstreamsWhere(ups []UpstreamConfig, is func(*UpstreamConfig) bool) []string {
	var out []string
	for i := range ups {
		if is(&ups[i]) {
			out = append(out, ups[i].Name)
		}
	}
	return out
}

// UpstreamAuth is upstreams.AuthConfig with the client secret given as a secret.
type UpstreamAuth struct {
	upstreams.AuthConfig `yaml:",inline"`
	// ClientSecret authenticates the gateway at the token endpoint (file, env or value). With
	// type userOAuth it needs authServer: the secret goes to that server alone, never to one
	// the backend's resource metadata names.
	ClientSecret Secret `yaml:"clientSecret"`
}

func (c *Config) applyDefaults() {
	s := &c.Server
	s.Config = s.Config.WithDefaults()
	c.Legacy = c.Legacy.WithDefaults()
	setDefault(&s.Listen, defaultListen)
	setDefault(&c.Admin.Listen, defaultAdminListen)
	setDefault(&c.Admin.RedisReadiness, redisReadinessRequired)
	setDefault(&c.Log.Level, defaultLogLevel)
	setDefault(&c.Log.Format, defaultLogFormat)
	durDefault(&s.ShutdownTimeout, defaultShutdownTimeout)
	durDefault(&s.ReadHeaderTimeout, defaultReadHeader)
	durDefault(&s.IdleTimeout, defaultIdleTimeout)
	if s.MaxHeaderBytes == 0 {
		s.MaxHeaderBytes = defaultMaxHeaderBytes
	}
}

func setDefault(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

func durDefault(p *time.Duration, v time.Duration) {
	if *p == 0 {
		*p = v
	}
}

// newConfig returns the configuration before the file, environment and flags: the defaults whose
// zero value is itself meaningful (so an explicit 0 in the file must survive), set up front
// rather than filled in afterwards.
func newConfig() Config {
	var c Config
	c.Server.DrainDelay = defaultDrainDelay
	// Pre-2026 clients are served, with their GET stream, unless the file says otherwise.
	c.Legacy.Enabled, c.Legacy.GetStream = true, true
	return c
}

// envVar is one MCPGW_* variable and how it changes the configuration.
type envVar struct {
	name string
	path string // the key path it overrides; "" for MCPGW_UPSTREAMS, which adds list entries
	set  func(c *Config, v string) error
}

// envVars maps each MCPGW_* variable to the setting it overrides. Kept as one table so the
// README documents exactly this list; a fresh one each call, so no caller changes it for another.
func envVars() []envVar {
	return []envVar{
		{"MCPGW_LISTEN", "server.listen", func(c *Config, v string) error { c.Server.Listen = v; return nil }},
		{"MCPGW_ADMIN_LISTEN", "admin.listen", func(c *Config, v string) error { c.Admin.Listen = v; return nil }},
		{"MCPGW_PATH", "server.path", func(c *Config, v string) error { c.Server.Path = v; return nil }},
		{"MCPGW_PUBLIC_URL", "server.publicURL", func(c *Config, v string) error { c.Server.PublicURL = v; return nil }},
		{"MCPGW_LOG_LEVEL", "log.level", func(c *Config, v string) error { c.Log.Level = v; return nil }},
		{"MCPGW_LOG_FORMAT", "log.format", func(c *Config, v string) error { c.Log.Format = v; return nil }},
		{"MCPGW_NO_AUTH", "auth.disabled", func(c *Config, v string) error { return parseBool(v, &c.Auth.Disabled) }},
		{"MCPGW_NO_PREFIX", "namespace.noPrefix", func(c *Config, v string) error { return parseBool(v, &c.Namespace.NoPrefix) }},
		{"MCPGW_UPSTREAMS", "", func(c *Config, v string) error {
			parts := strings.Split(v, ",")
			for i := range parts {
				parts[i] = strings.TrimSpace(parts[i])
			}
			return addUpstreams(c, parts)
		}},
	}
}

// parseBool reads a boolean variable in the spellings people write: true, yes, on, 1 and
// false, no, off, 0, in any case. Anything else is refused rather than read as false, so a typo
// cannot leave a switch at the value the operator did not mean.
func parseBool(v string, dst *bool) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		*dst = true
	case "0", "false", "no", "off":
		*dst = false
	default:
		return fmt.Errorf("%q is not a boolean: want true, yes, on or 1, or false, no, off or 0", v)
	}
	return nil
}

func applyEnv(c *Config, getenv func(string) string) error {
	var errs []error
	for _, e := range envVars() {
		if v := getenv(e.name); v != "" {
			for _, err := range configerr.List(e.set(c, v)) {
				errs = append(errs, fmt.Errorf("%s: %w", e.name, err))
			}
			c.src.setBy(e.path, e.name)
		}
	}
	return errors.Join(errs...)
}

// addUpstreams adds each NAME=URL of specs, as given to --upstream or MCPGW_UPSTREAMS, and
// reports every one that is not NAME=URL, not only the first.
func addUpstreams(c *Config, specs []string) error {
	var errs []error
	for _, spec := range specs {
		errs = append(errs, addUpstream(c, spec))
	}
	return errors.Join(errs...)
}

// addUpstream parses NAME=URL as given to --upstream or MCPGW_UPSTREAMS.
func addUpstream(c *Config, spec string) error {
	name, u, ok := strings.Cut(spec, "=")
	if !ok || name == "" || u == "" {
		return fmt.Errorf("upstream %q: want NAME=URL", configerr.URL(spec))
	}
	c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: name, URL: u}})
	return nil
}

// validate reports every problem at once, including those of each package's block, each a
// *configerr.Error naming the setting's key path in the file.
func (c *Config) validate() error {
	var errs []error
	if err := c.serverConfig().Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Legacy.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.validateToolsetUpstreams()...)
	errs = append(errs, validateRuleUpstreams(c)...)
	errs = append(errs, validateRuleNamespacedNames(c)...)
	errs = append(errs, c.validateMetaToolNames()...)
	errs = append(errs, c.validateHeaderNames()...)
	errs = append(errs, validateProcess(c)...)
	errs = append(errs, validateAuthentication(c)...)
	errs = append(errs, c.MRTR.validate()...)
	errs = append(errs, c.Redis.validate()...)
	errs = append(errs, c.Tracing.validate()...)
	errs = append(errs, c.validateApproval()...)
	errs = append(errs, c.validateUserOAuth()...)
	errs = append(errs, validatePagePaths(c)...)
	errs = append(errs, c.validateInterceptors()...)
	errs = append(errs, c.Search.validate()...)
	errs = append(errs, validateCompiled(c)...)
	errs = append(errs, validateRanges(c)...)
	errs = append(errs, unexpandedSecrets(c)...)
	return errors.Join(hintUnexpanded(c, errs)...)
}

// validatePagePaths: the approval page and the connect pages each own every path under their
// own (echo routes path and path/*), and the MCP endpoints own theirs (mcphttp.ServedPaths). A
// page whose path holds an endpoint's, a tool set's, a Server Card's or a metadata path, or is
// one, and two pages one under the other, would answer in each other's place, whichever route
// was registered last, with nothing said: a tool set at /approval/callback answered the page's
// sign-in callback with 405. A function: Config is at its method bound.
func validatePagePaths(c *Config) []error {
	type page struct{ key, path string }
	var pages []page
	if c.Approval.Enabled() {
		pages = append(pages, page{"approval.path", c.approvalConfig().Path})
	}
	if len(c.userOAuthBackends()) > 0 {
		pages = append(pages, page{"userOAuth.path", c.userOAuthConfig(nil).Path})
	}
	under := func(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }
	served := mcphttp.ServedPaths(c.serverConfig())
	var errs []error
	for i, pg := range pages {
		if why := mcphttp.PathProblem(pg.path); why != "" {
			errs = append(errs, configerr.At(pg.key, "%q: %s", pg.path, why))
		}
		if j := slices.IndexFunc(served, func(p string) bool { return under(p, pg.path) }); j >= 0 {
			errs = append(errs, configerr.At(pg.key, "%q holds %q, which the MCP endpoint serves (server.path, a tool set, a Server Card or metadata): give the page a path of its own",
				pg.path, served[j]))
		}
		for _, other := range pages[:i] {
			if under(pg.path, other.path) || under(other.path, pg.path) {
				errs = append(errs, configerr.At(pg.key, "%q and %s %q overlap: each page owns every path under its own", pg.path, other.key, other.path))
			}
		}
	}
	return errs
}

// validateProcess checks the listeners, the admin routes and the log.
func validateProcess(c *Config) []error {
	var errs []error
	at := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	errs = append(errs, validateListeners(c.Server.Listen, c.Admin.Listen)...)
	if r := c.Admin.RedisReadiness; r != redisReadinessRequired && r != redisReadinessAdvisory {
		at("admin.redisReadiness", "%q: want required or advisory", r)
	}
	errs = append(errs, c.Admin.Explain.validate(c.Admin.Listen, !c.Admin.Token.IsZero())...)
	errs = append(errs, c.Admin.validateAccess()...)
	errs = append(errs, c.Server.validateListener()...)
	if (c.Server.TLS.CertFile == "") != (c.Server.TLS.KeyFile == "") {
		at("server.tls", "certFile and keyFile must be set together")
	}
	if !slices.Contains(logLevels(), c.Log.Level) {
		at("log.level", "%q: want %s", c.Log.Level, orList(logLevels()))
	}
	if !slices.Contains(logFormats(), c.Log.Format) {
		at("log.format", "%q: want %s", c.Log.Format, orList(logFormats()))
	}
	return errs
}

// validateAuthentication checks authentication, or its absence, and what the backends need of
// it.
func validateAuthentication(c *Config) []error {
	var errs []error
	at := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if c.Auth.Disabled && !IsLoopbackAddr(c.Server.Listen) && !c.forceNoAuth {
		at("auth.disabled", "refused on the non-loopback listener %q without --force: every caller could call every tool", c.Server.Listen)
	}
	if !c.Auth.Disabled {
		errs = append(errs, c.validateAuth()...)
	}
	for i, u := range c.Upstreams {
		if c.Auth.Disabled && u.Auth.Type == upstreams.AuthTokenExchange {
			// Without authentication there is no caller token to exchange: every call to the
			// backend would be refused, never sent as the gateway instead.
			at(fmt.Sprintf("upstreams[%d].auth.type", i), "tokenExchange needs authenticated callers; it cannot be honoured with auth.disabled")
		}
		errs = append(errs, validateSubjectIssuers(c.Auth.Issuers, i, u.Auth.SubjectIssuers)...)
	}
	return errs
}

// validateCompiled checks what is validated by compiling it: the guardrails, the pins, the rate
// limits, the secrets' references and the backends.
func validateCompiled(c *Config) []error {
	var errs []error
	if err := c.Guardrails.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Pins != nil {
		if err := c.Pins.Validate(c.upstreamNames()); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, c.validatePinKeys()...)
	}
	if _, err := c.compileRateLimits(nil, nil); err != nil {
		errs = append(errs, err)
	}
	for _, r := range c.secretRefs() {
		if err := r.s.validate(); err != nil {
			errs = append(errs, configerr.At(r.path, "%v", err))
		}
	}
	up := c.upstreamsConfig(c.placeholderSecrets())
	if err := up.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// legacyNote is what check-config says about pre-2026 clients: which versions are served and,
// without Redis, that a client's answer to an elicitation reaches only the replica that asked,
// so such a deployment must run one replica.
func (c *Config) legacyNote() string {
	if !c.Legacy.Enabled {
		return "pre-2026 clients: refused (legacy.enabled is false)\n"
	}
	note := "pre-2026 clients: served (" + strings.Join(c.Legacy.Versions, ", ") + ")"
	if !c.Redis.enabled() {
		note += "; without redis their answers to elicitation, sampling and roots reach only the replica that asked: run a single replica"
	}
	return note + "\n"
}

// policyNote is what check-config and serve say when authentication is on and no policy rule
// allows anything: the gateway then denies every caller everything, a configuration that passes
// every check and answers every tools/list with an empty list. Deny by default is right, but a
// first configuration without rules (the issuer block alone, as when trying test tokens) looks
// broken without it. "" when some rule allows, or authentication is off; one line otherwise.
func policyNote(c *Config) string {
	if c.Auth.Disabled {
		return ""
	}
	for _, r := range c.Auth.Policy.Rules {
		if r.Effect == "" || r.Effect == authz.EffectAllow {
			return ""
		}
	}
	return "policy: no rule allows anything (auth.policy.rules): every caller is denied every tool, prompt and resource, and lists are empty; add allow rules (README, \"Policy\")"
}

// authOffNote is what check-config says of a configuration without authentication, which
// passes its checks (on loopback, or with --force) and which serve only warns of once started.
func authOffNote(c *Config) string {
	if !c.Auth.Disabled {
		return ""
	}
	return "authentication: OFF (auth.disabled): every caller can list and call every backend tool; for development only"
}

// serverConfig is the MCP endpoint's configuration: the server: block with the top-level
// toolsets: block, which mcphttp reads as one.
func (c *Config) serverConfig() mcphttp.Config {
	s := c.Server.Config
	s.Toolsets = c.Toolsets // the top-level block is the endpoint's
	return s
}

func (e ExplainConfig) validate(listen string, adminToken bool) []error {
	if e.Enabled && e.Secret.IsZero() && !adminToken && !IsLoopbackAddr(listen) {
		return []error{configerr.At("admin.explain.enabled", "on the non-loopback admin listener %q needs admin.explain.secret or admin.token: the explainer reveals the policy and token claims", listen)}
	}
	return nil
}

// upstreamNames lists the configured backends' names, in configuration order.
func (c *Config) upstreamNames() []string {
	names := make([]string, 0, len(c.Upstreams))
	for _, u := range c.Upstreams {
		names = append(names, u.Name)
	}
	return names
}

func (c *Config) validateAuth() []error {
	var errs []error
	if len(c.Auth.Issuers) == 0 {
		errs = append(errs, configerr.At("auth.issuers", "no issuer configured: configure auth.issuers, or pass --no-auth (auth.disabled: true) to serve without authentication"))
	}
	if c.Server.PublicURL == "" {
		errs = append(errs, configerr.At("server.publicURL", "required with authentication: it is the token audience (RFC 8707) and locates the protected resource metadata"))
	}
	if len(c.Auth.Issuers) > 0 {
		errs = append(errs, configerr.Under("auth", nil, c.Auth.Config.Validate())...)
	}
	if c.Server.PublicURL != "" && c.Auth.Config.DPoPUsed() {
		if _, err := dpop.NormalizeURL(c.Server.PublicURL); err != nil {
			// Every proof's htu is compared with it: the gateway would start and refuse every
			// DPoP request.
			errs = append(errs, configerr.At("server.publicURL", "%q: with auth.dpop, want an http(s) URL without query or user information, its host a DNS name or IP literal: DPoP proofs' htu is compared with it", c.Server.PublicURL))
		}
	}
	if c.Auth.DPoP.Nonce.Required && c.Redis.enabled() && len(c.MRTR.Keys) == 0 {
		// Redis means several replicas; a nonce sealed under one replica's random key would be
		// refused by every other, and clients would loop on use_dpop_nonce.
		errs = append(errs, configerr.At("mrtr.keys", "required: auth.dpop.nonce.required with redis: DPoP nonces are sealed, and every replica must open the ones the others issued"))
	}
	return errs
}

// validateSubjectIssuers checks upstream i's auth.subjectIssuers against auth.issuers: a token
// is exchanged only for callers the gateway authenticates, so an issuer it does not is a typo
// that would refuse every caller. (upstreams says when the list is missing.)
func validateSubjectIssuers(issuers []authz.IssuerConfig, i int, subjectIssuers []string) []error {
	var errs []error
	for j, iss := range subjectIssuers {
		if !slices.ContainsFunc(issuers, func(ic authz.IssuerConfig) bool { return ic.Issuer == iss }) {
			errs = append(errs, configerr.At(fmt.Sprintf("upstreams[%d].auth.subjectIssuers[%d]", i, j), "%q is not one of auth.issuers", iss))
		}
	}
	return errs
}

// upstreamsConfig converts the file form to upstreams.Config with the given resolved secrets
// (placeholders for validation only). Every setting is carried over as it is; the secrets are
// filled in, and a tokenExchange backend without subjectIssuers takes the gateway's issuer when
// it has exactly one (with several the operator must say which: upstreams refuses the list
// missing).
func (c *Config) upstreamsConfig(resolved map[string]map[string]string) upstreams.Config {
	out := c.Config
	out.Upstreams = nil
	for _, u := range c.Upstreams {
		up := u.UpstreamConfig
		up.Auth = u.Auth.AuthConfig
		if up.Auth.Type == upstreams.AuthTokenExchange && len(up.Auth.SubjectIssuers) == 0 && len(c.Auth.Issuers) == 1 {
			up.Auth.SubjectIssuers = []string{c.Auth.Issuers[0].Issuer}
		}
		up.Auth.ClientSecret = resolved[u.Name][clientSecretKey]
		up.Headers = resolved[u.Name]
		if _, ok := up.Headers[clientSecretKey]; ok {
			up.Headers = maps.Clone(up.Headers)
			delete(up.Headers, clientSecretKey)
		}
		out.Upstreams = append(out.Upstreams, up)
	}
	return out
}

// placeholderSecrets stands in for every secret that is configured, so validation checks the
// rest of the configuration without reading secret files: check-config --static runs where
// they do not exist (CI on a rendered Helm chart), and preflight reads them in its own step.
func (c *Config) placeholderSecrets() map[string]map[string]string {
	out := make(map[string]map[string]string, len(c.Upstreams))
	for _, u := range c.Upstreams {
		m := make(map[string]string, len(u.Headers)+1)
		for h := range u.Headers {
			m[h] = "placeholder"
		}
		if !u.Auth.ClientSecret.IsZero() {
			m[clientSecretKey] = "placeholder"
		}
		out[u.Name] = m
	}
	return out
}

// clientSecretKey carries an upstream's resolved OAuth client secret beside its header values;
// it cannot clash with a header name, which never contains a space.
const clientSecretKey = "auth client secret"

// resolveSecrets reads every header secret and OAuth client secret. Errors name the setting, never the value.
func (c *Config) resolveSecrets(getenv func(string) string) (map[string]map[string]string, error) {
	out := make(map[string]map[string]string, len(c.Upstreams))
	var errs []error
	for i, u := range c.Upstreams {
		if !u.Auth.ClientSecret.IsZero() {
			v, err := u.Auth.ClientSecret.resolve(getenv)
			if err != nil {
				errs = append(errs, fmt.Errorf("upstreams[%d].auth.clientSecret: %w", i, err))
			} else {
				if out[u.Name] == nil {
					out[u.Name] = map[string]string{}
				}
				out[u.Name][clientSecretKey] = v
			}
		}
		for h, s := range u.Headers {
			v, err := s.resolve(getenv)
			if err != nil {
				errs = append(errs, fmt.Errorf("upstreams[%d].headers.%s: %w", i, h, err))
				continue
			}
			if out[u.Name] == nil {
				out[u.Name] = make(map[string]string, len(u.Headers))
			}
			out[u.Name][h] = v
		}
	}
	return out, errors.Join(errs...)
}

// IsLoopbackAddr reports whether a listen address binds only loopback interfaces (one rule
// for the whole gateway: internal/loopback). An empty host (":8080") binds every interface
// and is not loopback.
func IsLoopbackAddr(addr string) bool {
	return loopback.Addr(addr)
}

// resolveSecret reads the explainer's bearer secret, if one is configured.
func (e ExplainConfig) resolveSecret(getenv func(string) string) (string, error) {
	if e.Secret.IsZero() {
		return "", nil
	}
	v, err := e.Secret.resolve(getenv)
	if err != nil {
		return "", fmt.Errorf("admin.explain.secret: %w", err)
	}
	return v, nil
}

// buildVersion is the version the gateway reports: the one Run was given, "dev" without.
func (c *Config) buildVersion() string {
	if c.version == "" {
		return "dev"
	}
	return c.version
}

// NewConfig returns the configuration every command starts from, before a file, the
// environment or flags change it. With Complete it is the one place where defaults are set:
// `serve`, `check-config` and the demo all take this path.
func NewConfig() Config { return newConfig() }

// Complete fills in every default the settings left unset and validates the result, reporting
// every problem at once.
func (c *Config) Complete() error {
	c.applyDefaults()
	return c.check(nil, checkSettings)
}
