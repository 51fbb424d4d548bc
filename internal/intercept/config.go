package intercept

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// Defaults and bounds of Config.
const (
	// DefaultTimeout bounds one invocation, waiting for a free slot included: an interceptor is
	// on the path of every call it governs, so it has far less time than a backend.
	DefaultTimeout = 2 * time.Second
	// MaxTimeout bounds Config.Timeout.
	MaxTimeout = 5 * time.Minute
	// DefaultMaxConcurrent bounds the invocations of one interceptor in flight on a replica.
	DefaultMaxConcurrent = 64
	// DefaultMaxPayloadBytes bounds the payload sent to an interceptor; a larger one is an
	// invocation failure that refuses the call whatever failOpen says (the caller's own doing),
	// never sent cut.
	DefaultMaxPayloadBytes = 4 << 20
	// DefaultMaxResponseBytes bounds an interceptor's answer.
	DefaultMaxResponseBytes = 8 << 20
	// MaxClaims bounds Config.Claims.
	MaxClaims = 32
)

// Values of Config.Type: the result the gateway expects, as the SEP names the interceptor
// types. A result of the other type is malformed.
const (
	TypeValidation = "validation"
	TypeMutation   = "mutation"
)

// Values of Config.Mode.
const (
	// ModeActive: a refusal blocks, a mutation is applied (the default).
	ModeActive = "active"
	// ModeAudit: the interceptor is called and its decision logged and counted, but it never
	// blocks and its mutations are not applied (shadow mutations).
	ModeAudit = "audit"
)

// Values of RuleConfig.Phases.
const (
	PhaseNameRequest  = "request"
	PhaseNameResponse = "response"
)

// Config is one interceptor: an Interceptor Server reached over MCP (SEP-2624's
// interceptor/invoke), or a plain HTTP webhook with the same contract, and the rules that
// select the calls it governs.
type Config struct {
	// Name identifies the interceptor in rules, logs and metric labels:
	// [a-z][a-z0-9-]{0,62}, unique.
	Name string `yaml:"name"`
	// URL is the Interceptor Server's MCP endpoint (Streamable HTTP), or with Webhook the URL
	// the invocation is POSTed to. http or https; user info in it is sent as Basic Authorization
	// (it excludes auth and an Authorization header) and is never reported.
	URL string `yaml:"url"`
	// Webhook makes URL a plain HTTP endpoint: the interceptor/invoke params are POSTed as a
	// JSON object and the answer is the result object itself (no JSON-RPC, no MCP session).
	// Default false: an MCP Interceptor Server.
	Webhook bool `yaml:"webhook"`
	// Interceptor is the interceptor's name on its server, sent as params.name. Default Name.
	Interceptor string `yaml:"interceptor"`
	// Type is what the interceptor is: "validation" (it allows or refuses) or "mutation" (it
	// returns the payload to use instead). Required: the gateway routes its answer, and its
	// failures, by the type it expects.
	Type string `yaml:"type"`
	// Mode is "active" (the default: refusals block, mutations apply) or "audit" (called,
	// logged and counted, never blocking, mutations not applied).
	Mode string `yaml:"mode"`
	// FailOpen lets a call through when the interceptor cannot give a decision (unreachable,
	// too slow, its shared circuit open, a malformed answer). Default false: such a call is
	// refused. The failures a caller makes itself, the interceptor never asked (its own circuit
	// open, its share of the slots taken, a payload past MaxPayloadBytes), refuse the call
	// either way: a caller must not switch the check off for itself.
	FailOpen bool `yaml:"failOpen"`
	// Timeout bounds one invocation, the wait for a free slot included; the interceptor is told
	// it as timeoutMs. Default DefaultTimeout; at most MaxTimeout.
	Timeout time.Duration `yaml:"timeout"`
	// MaxConcurrent bounds this interceptor's invocations in flight on a replica; more wait
	// for a slot within Timeout. Default DefaultMaxConcurrent.
	MaxConcurrent int `yaml:"maxConcurrent"`
	// MaxConcurrentPerCaller bounds one caller's (issuer and subject; without authentication,
	// client address) share of those invocations: past it, a call is refused at once (reason
	// caller_limit, whatever FailOpen says) instead of waiting, so one caller cannot hold the
	// slots every other caller's calls need. Default an eighth of MaxConcurrent (seven callers
	// holding theirs leave another caller slots, as with the answers' budget), at least 1; at
	// most MaxConcurrent.
	MaxConcurrentPerCaller int `yaml:"maxConcurrentPerCaller"`
	// MaxPayloadBytes bounds the payload (the request or the result) sent; a larger one is an
	// invocation failure (reason too_large) that refuses the call whatever FailOpen says.
	// Default DefaultMaxPayloadBytes.
	MaxPayloadBytes int64 `yaml:"maxPayloadBytes"`
	// MaxResponseBytes bounds the interceptor's answer. Default DefaultMaxResponseBytes.
	MaxResponseBytes int64 `yaml:"maxResponseBytes"`
	// Priority orders mutation interceptors of one phase, lowest first, ties by name (the
	// SEP's priorityHint, set by the gateway's operator). Ignored for validation.
	Priority int32 `yaml:"priority"`
	// Claims are the names of the caller's token claims the interceptor is given in
	// context.principal.claims; "sub" also gives principal.id. None by default: the
	// interceptor learns nothing of who calls.
	Claims []string `yaml:"claims"`
	// Settings is sent as the invocation's config object, unchanged. Optional.
	Settings map[string]any `yaml:"config"`
	// ShowReason puts the interceptor's own messages (their text, bounded) into the refusal the
	// caller sees. Default false: the refusal names the interceptor only, since its messages may
	// describe what it saw (a result the caller is not given, for one).
	ShowReason bool `yaml:"showReason"`
	// Rules select the calls the interceptor governs; at least one.
	Rules []RuleConfig `yaml:"rules" minItems:"1"`
	// Protocol is the MCP revision spoken to an Interceptor Server, as for an upstream: "auto"
	// (the default), "2026-07-28", or a pre-2026 revision. Not used with Webhook.
	Protocol string `yaml:"protocol"`
	// ConnectTimeout bounds connecting (TCP and TLS). Zero means the upstreams' default.
	ConnectTimeout time.Duration `yaml:"connectTimeout"`
	// TLS sets the trust anchors and client certificate for an https interceptor, as for an
	// upstream.
	TLS backend.TLSConfig `yaml:"tls"`
	// Breaker tunes the interceptor's circuit breaker, as for an upstream: consecutive failures
	// open it, and an open circuit fails fast (a failure, routed by FailOpen) until a trial
	// after its cooldown succeeds. A caller's own circuit, which its own failures open, refuses
	// its calls whatever FailOpen says.
	Breaker backend.BreakerConfig `yaml:"breaker"`
	// Headers are static headers sent on every request, typically the interceptor's own
	// Authorization; the values are resolved secrets, never logged. Not read from YAML.
	Headers map[string]string `yaml:"-"`
	// Auth makes the gateway get its own OAuth token for the interceptor (client credentials
	// only: the caller's token is never given to an interceptor, nor exchanged for one). Not
	// read from YAML, where its client secret is a secret the caller resolves.
	Auth backend.AuthConfig `yaml:"-"`
}

// RuleConfig selects calls for an interceptor: a method's item on a backend, and the phases.
type RuleConfig struct {
	// ID names the rule in logs. Default "<interceptor>-<index>".
	ID string `yaml:"id"`
	// Upstream is a glob over backend names ('*' any run of characters, '?' one). Default "*".
	Upstream string `yaml:"upstream"`
	// Tools are globs over backend-side tool names: tools/call of a matching tool is governed.
	Tools []string `yaml:"tools"`
	// Prompts are globs over backend-side prompt names (prompts/get).
	Prompts []string `yaml:"prompts"`
	// Resources are globs over backend-side resource URIs (resources/read).
	Resources []string `yaml:"resources"`
	// Phases are "request" (after authorization and pinning, before the backend receives the
	// call) and "response" (before the client receives the result). Default both, when the
	// key is left out; an empty list is refused (it would read as no phase).
	Phases []string `yaml:"phases" minItems:"1"`
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Interceptor == "" {
		c.Interceptor = c.Name
	}
	if c.Mode == "" {
		c.Mode = ModeActive
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.MaxConcurrentPerCaller == 0 {
		c.MaxConcurrentPerCaller = max(c.MaxConcurrent/answerShareDivisor, 1)
	}
	if c.MaxPayloadBytes == 0 {
		c.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return c
}

// Problems reports every problem of one interceptor's configuration, each a *configerr.Error
// whose key path is relative to its entry; it changes nothing. Whether the name is unique is
// the caller's to check (Validate).
func (c *Config) Problems() []error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if c.Type != TypeValidation && c.Type != TypeMutation {
		add("type", "%q: want %s or %s", c.Type, TypeValidation, TypeMutation)
	}
	if c.Mode != "" && c.Mode != ModeActive && c.Mode != ModeAudit {
		add("mode", "%q: want %s or %s", c.Mode, ModeActive, ModeAudit)
	}
	if c.Timeout < 0 || c.Timeout > MaxTimeout {
		add("timeout", "%s: want 0 (the default, %s) up to %s", c.Timeout, DefaultTimeout, MaxTimeout)
	}
	for _, f := range []struct {
		key string
		neg bool
	}{{"maxConcurrent", c.MaxConcurrent < 0}, {"maxConcurrentPerCaller", c.MaxConcurrentPerCaller < 0},
		{"maxPayloadBytes", c.MaxPayloadBytes < 0},
		{"maxResponseBytes", c.MaxResponseBytes < 0}} {
		if f.neg {
			add(f.key, "must not be negative")
		}
	}
	if d := c.WithDefaults(); c.MaxConcurrentPerCaller > 0 && c.MaxConcurrentPerCaller > d.MaxConcurrent {
		add("maxConcurrentPerCaller", "%d: at most maxConcurrent (%d)", c.MaxConcurrentPerCaller, d.MaxConcurrent)
	}
	if len(c.Claims) > MaxClaims {
		add("claims", "%d claims: at most %d", len(c.Claims), MaxClaims)
	}
	for i, name := range c.Claims {
		if name == "" || slices.Index(c.Claims, name) != i {
			add(fmt.Sprintf("claims[%d]", i), "%q: want a claim name, each once", name)
		}
	}
	switch c.Auth.Type {
	case backend.AuthTokenExchange:
		add("auth.type", "tokenExchange would hand the interceptor the caller's identity as a token: an interceptor gets the gateway's own credentials (clientCredentials or a static header)")
	case backend.AuthUserOAuth:
		add("auth.type", "userOAuth is a backend's per-caller accounts, which no invocation carries: an interceptor gets the gateway's own credentials (clientCredentials or a static header)")
	}
	if c.Webhook && c.Protocol != "" {
		add("protocol", "a webhook speaks no MCP revision; remove protocol or webhook")
	}
	errs = append(errs, c.backendProblems()...)
	if len(c.Rules) == 0 {
		add("rules", "at least one rule is required: an interceptor without one governs nothing")
	}
	ids := map[string]int{}
	for i := range c.Rules {
		at := fmt.Sprintf("rules[%d]", i)
		errs = append(errs, configerr.Under(at, nil, c.Rules[i].problems()...)...)
		id := c.ruleID(i)
		if first, dup := ids[id]; dup {
			add(at+".id", "%q is already the id of rule %d; ids are unique", id, first)
		} else {
			ids[id] = i
		}
	}
	return errs
}

// ruleID is rule i's id: its own, or the interceptor's name and its index.
func (c *Config) ruleID(i int) string {
	if id := c.Rules[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("%s-%d", c.Name, i)
}

// backendProblems are the problems of the connection settings, checked as an upstream's are
// (name, URL, headers, TLS, credentials, breaker), but for the settings Problems checks itself
// with the interceptor's own bounds: said twice, the second message would only say less.
func (c *Config) backendProblems() []error {
	bc := c.backendConfig()
	return slices.DeleteFunc(bc.Problems(), func(err error) bool {
		p, _ := configerr.PathOf(err)
		return p == "timeout" || p == "maxResponseBytes"
	})
}

func (r *RuleConfig) problems() []error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if len(r.Tools)+len(r.Prompts)+len(r.Resources) == 0 {
		add("", "names no tools, prompts or resources: a rule selects at least one")
	}
	if r.Phases != nil && len(r.Phases) == 0 {
		// Left out, the key means both phases; written empty, an operator may mean none.
		add("phases", "an empty list, which would govern no phase: list %s, %s or both, or leave the key out for both",
			PhaseNameRequest, PhaseNameResponse)
	}
	for i, p := range r.Phases {
		if p != PhaseNameRequest && p != PhaseNameResponse {
			add(fmt.Sprintf("phases[%d]", i), "%q: want %s or %s", p, PhaseNameRequest, PhaseNameResponse)
		}
	}
	return errs
}

// backendConfig is the connection to the interceptor as package backend configures one: no
// retries (an invocation is not safe to repeat blind: the SEP routes an indeterminate outcome as
// a failure), and its own timeout and answer bound, defaulted by WithDefaults whether or not c
// already was (Problems checks c as written). The wait for the answer's headers is the whole
// timeout: an interceptor answers when it has decided, so its headers may come as late as its
// answer, and a backend's own header bound (30 s) would cut an invocation the operator gave up
// to five minutes.
func (c *Config) backendConfig() backend.Config {
	d := c.WithDefaults()
	protocol := d.Protocol
	if d.Webhook {
		// No era probe: the webhook is sent nothing but its invocations.
		protocol = backend.ProtocolVersion
	}
	return backend.Config{
		Name: d.Name, URL: d.URL, Timeout: d.Timeout, ResponseHeaderTimeout: d.Timeout, ConnectTimeout: d.ConnectTimeout,
		Headers: d.Headers, MaxResponseBytes: d.MaxResponseBytes, Protocol: protocol,
		TLS: d.TLS, Auth: d.Auth, Retry: backend.RetryConfig{Attempts: 1}, Breaker: d.Breaker,
	}
}

// Validate reports every problem of a list of interceptors at once, each a *configerr.Error
// whose key path starts at interceptors[i]; it changes nothing.
func Validate(cs []Config) error {
	var errs []error
	seen := map[string]int{}
	for i := range cs {
		at := fmt.Sprintf("interceptors[%d]", i)
		errs = append(errs, configerr.Under(at, nil, cs[i].Problems()...)...)
		if first, dup := seen[cs[i].Name]; dup {
			errs = append(errs, configerr.At(at+".name", "%q is already interceptor %d; each name once", cs[i].Name, first))
		} else {
			seen[cs[i].Name] = i
		}
	}
	return errors.Join(errs...)
}
