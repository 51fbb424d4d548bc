// Package backend is one backend MCP server as the gateway talks to it: its HTTP transport and
// TLS, its credentials (static headers, client credentials, RFC 8693 token exchange), the
// retries of safe requests, the circuit breaker and health, the protocol era it speaks
// (2026-07-28, or a pre-2026 revision reached through the bridge of package legacy), its
// server/discover answer, and sending one request and relaying its response (Call, Stream).
//
// Policy over many backends (resolving names, fanning out, merging) is not here: that is
// package upstreams, whose Registry holds one Backend per configured backend, and its rooms
// catalog (lists) and listen (subscriptions/listen).
package backend

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/upstreams/direct"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/legacy"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// DefaultUserAgent is sent to backends when Env.UserAgent is empty.
const DefaultUserAgent = "mcp-gateway"

// Transport pool sizes. One gateway replica may carry hundreds of concurrent calls to one
// backend; keeping that many idle connections avoids a new TCP/TLS handshake per call.
//
// DefaultIdleConnTimeout (Config.IdleConnTimeout) is below the keep-alive timeout of the servers
// MCP backends commonly run on: Node's http.Server (the TypeScript SDK's) and uvicorn (the
// Python SDK's) close a connection idle for 5 s. A pooled connection the backend (or a proxy in
// front of it, which may close sooner: hence the setting) closes just as a call is written to
// it fails that call, and a tools/call is never retried once a byte of it was sent; so the
// gateway lets go of an idle connection first. A busy connection is never idle that long, so
// under load the pool is kept.
const (
	maxIdleConnsPerHost = 256
	commonServerIdle    = 5 * time.Second // Node's keepAliveTimeout, uvicorn's timeout_keep_alive
	tcpKeepAlive        = 30 * time.Second
)

// Outcomes passed to Env.Observe: the part of the gateway's one outcome set (internal/outcome)
// that a backend request can end in, so each is a metric label value as it is and means there
// what it means here.
const (
	// OutcomeOK: the backend answered with a result.
	OutcomeOK = outcome.OK
	// OutcomeBackendError: the backend answered with a JSON-RPC error, relayed to the client.
	OutcomeBackendError = outcome.BackendError
	// OutcomeUnavailable: see wire.ErrUnavailable.
	OutcomeUnavailable = outcome.Unavailable
	// OutcomeTimeout: see wire.ErrTimeout.
	OutcomeTimeout = outcome.Timeout
	// OutcomeBadResponse: see wire.ErrBadResponse.
	OutcomeBadResponse = outcome.BadResponse
	// OutcomeRateLimited: the backend answered HTTP 429 (wire.ErrRateLimited). An answer: it
	// is up, and neither its circuit breaker nor its health counts it as a failure.
	OutcomeRateLimited = outcome.RateLimited
	// OutcomeCanceled: the caller went away or closed the stream before the final response.
	OutcomeCanceled = outcome.Canceled
)

// Env is what the backends of one registry share: its dependencies and hooks.
type Env struct {
	// Log receives backend failures (never tokens, secrets or argument values). Required.
	Log *slog.Logger
	// Now returns the current time. Required.
	Now func() time.Time
	// Names namespaces the resource URIs of responses. Required.
	Names *names.Space
	// Results bounds the buffer memory of the responses being relayed at once. Required.
	Results *bodyread.Budget
	// CallerResults, when set, are the callers' shares of Results: a call's response is read
	// within its caller's (Call.Bound). Nil: every response within Results alone.
	CallerResults *bodyread.Shares
	// Kick, when set, is signalled (without blocking) when a request fails in a way that
	// should make the health prober look at the backends soon.
	Kick chan struct{}
	// UserAgent is sent to backends. Empty means DefaultUserAgent.
	UserAgent string
	// Transport replaces the backends' own HTTP transports (tests). Optional.
	Transport http.RoundTripper
	// Observe, when set, is called once per backend request with its outcome (one of the
	// Outcome constants), the MCP method and the time until the final response or failure.
	Observe func(upstream, method, outcome string, d time.Duration)
	// NotificationDropped, when set, is called for each notification of a call's response
	// stream that was read and not relayed because the call had already relayed
	// Config.MaxNotificationsPerCall. It must not block.
	NotificationDropped func(upstream string)
	// CircuitState, when set, is called with a backend's circuit state once at New and on
	// every change; it runs under the breaker's lock and must not block.
	CircuitState func(upstream string, state int)
	// CallerCircuit, when set, is called with one of the Caller events of a backend's
	// per-caller circuits (BreakerConfig.MinCallers); it runs under the breaker's lock and must
	// not block.
	CallerCircuit func(upstream, event string)
	// RateLimited, when set, is called when a backend's 429 starts a wait where none was
	// running (for a backend that answers as each caller, that caller's); it runs under a lock
	// and must not block.
	RateLimited func(upstream string)
	// OnHealth, when set, is called when a backend's health changes (and with the first
	// probe's result). It must not block.
	OnHealth func(upstream string, up bool)
	// UserTokens hands out the callers' tokens of per-user backends (AuthUserOAuth). Nil: a
	// per-user backend's requests go without Authorization unless the call carries the token.
	UserTokens UserTokens
	// Apps declares the MCP Apps extension to pre-2026 backends at initialize (the apps switch):
	// their sessions are shared by many callers, and one that offers UI tools only to hosts
	// supporting apps must show them to the gateway that routes the apps' calls.
	Apps bool
}

// Backend is one configured backend with its compiled client. It is safe for concurrent use.
type Backend struct {
	env      *Env
	name     string
	url      string
	safeURL  string // as configerr.URL quotes it, for reports
	timeout  time.Duration
	required bool
	maxBytes int64
	// maxNotes bounds the notifications relayed per call (Config.MaxNotificationsPerCall).
	maxNotes int
	// header holds the headers every request carries: Content-Type, Accept, User-Agent and
	// the configured static ones. Requests share its value slices and never modify them.
	header http.Header
	// template is a POST to url with nothing else set; each request is a shallow copy of it, so
	// the URL is parsed once. nil when url does not parse (Config.Problems refuses that).
	template *http.Request
	client   *http.Client
	// rt is the client's transport, used directly on the hot path: http.Client adds redirect
	// bookkeeping (a header copy per request) that a backend call never needs, since redirects
	// are refused anyway.
	rt        http.RoundTripper
	transport *http.Transport   // nil when Env.Transport was given
	direct    *direct.Transport // the transport of a plain-http backend, else nil
	health    health
	disc      discoverCache
	breaker   *breaker   // nil when disabled
	waits     *rateWaits // the Retry-After waits its 429s asked for (ratewait.go)
	// circuitOf is what the breaker's record is about (ShareCircuit): the backend it reaches
	// and how, and the breaker's own settings.
	circuitOf circuitIdentity
	creds     *credentials // nil without auth
	retry     retryPolicy
	legacy    *legacyState // era detection and the session pool for pre-2026 backends
	names     nameForm     // how this backend takes a non-ASCII Mcp-Name (nameform.go)
	// offCallNote is set once a call's stream has carried a notification unrelated to the
	// call (stream.go callNotification), which is logged only the first time.
	offCallNote atomic.Bool
}

// New compiles one backend's configuration, which the caller has validated (Config.Problems).
// It fails only when the TLS files cannot be read.
func New(uc Config, env *Env) (*Backend, error) {
	ua := env.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	b := newBackend(uc, ua, env)
	if err := configureTransport(b, &uc, env.Log, env.Now); err != nil {
		b.Close()
		return nil, err
	}
	// Every request goes through rt or the client (a pre-2026 backend's sessions), and so
	// every answer through the scrubber of the credentials it was sent with (scrub.go).
	b.rt = scrubbing(b.rt, &uc)
	b.client.Transport = waitGate{b}
	b.breaker = newBreaker(b.name, uc.Breaker, env.CircuitState, env.CallerCircuit)
	b.circuitOf = circuitIdentity{url: uc.URL, headers: uc.Headers, protocol: uc.Protocol, tls: uc.TLS, auth: uc.Auth, breaker: uc.Breaker}
	b.retry = newRetryPolicy(uc.Retry)
	b.creds = newCredentials(b.name, uc.Auth, nil, env.Now)
	b.legacy.bridge = b.newBridge(&uc.Auth)
	b.waits = newRateWaits(b.name, AnswersAsCaller(b), orInt(uc.Breaker.TrackedCallers, DefaultBreakerTrackedCallers), env.RateLimited)
	return b, nil
}

func newBackend(uc Config, userAgent string, env *Env) *Backend {
	b := &Backend{
		env:      env,
		name:     uc.Name,
		url:      uc.URL,
		safeURL:  configerr.URL(uc.URL),
		timeout:  orDuration(uc.Timeout, DefaultTimeout),
		required: uc.Required,
		maxBytes: uc.MaxResponseBytes,
		maxNotes: uc.MaxNotificationsPerCall,
		header: http.Header{
			"Content-Type": {"application/json"},
			"Accept":       {"application/json, text/event-stream"},
			"User-Agent":   {userAgent},
		},
	}
	if b.maxBytes == 0 {
		b.maxBytes = DefaultMaxResponseBytes
	}
	if b.maxNotes == 0 {
		b.maxNotes = DefaultMaxNotificationsPerCall
	}
	if onHealth := env.OnHealth; onHealth != nil {
		name := uc.Name
		b.health.onChange = func(up bool) { onHealth(name, up) }
	}
	b.legacy = newLegacyState(uc.Protocol, userAgent)
	for k, v := range uc.Headers {
		b.header.Set(k, v)
	}
	if auth := userInfoAuth(uc.URL); auth != "" && uc.Auth.Type == "" && b.header.Get("Authorization") == "" {
		// Every request carries it, as net/http's client would add it: a request sent through
		// the transport alone (every 2026-07-28 one) would otherwise go without it.
		b.header.Set("Authorization", auth)
	}
	if tmpl, err := http.NewRequest(http.MethodPost, uc.URL, nil); err == nil {
		b.template = tmpl
	}
	rt := env.Transport
	if rt == nil {
		b.transport = newTransport(orDuration(uc.ConnectTimeout, DefaultConnectTimeout), orDuration(uc.IdleConnTimeout, DefaultIdleConnTimeout))
		rt = b.transport
	}
	b.rt = rt
	b.client = &http.Client{
		Transport: rt,
		// A redirect would send the backend's credentials and the request body elsewhere; a
		// 3xx is reported as a bad response instead.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return b
}

func newTransport(connect, idle time.Duration) *http.Transport {
	d := &net.Dialer{Timeout: connect, KeepAlive: tcpKeepAlive}
	return &http.Transport{
		// No Proxy: packages read no environment; a proxy would be configured explicitly.
		DialContext:         d.DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        4 * maxIdleConnsPerHost,
		MaxIdleConnsPerHost: maxIdleConnsPerHost,
		IdleConnTimeout:     idle,
		TLSHandshakeTimeout: connect,
	}
}

// Close ends the backend's pre-2026 sessions with DELETE, so the backend frees them now rather
// than at its idle timeout, then releases idle connections. In-flight calls are ended by their
// contexts.
func (b *Backend) Close() {
	if b.legacy.bridge != nil {
		b.legacy.bridge.Close() // while connections are still pooled
	}
	if b.transport != nil {
		b.transport.CloseIdleConnections()
	}
	if b.direct != nil {
		b.direct.CloseIdleConnections()
	}
	b.creds.close()
}

// CloseAll closes every backend of bs at once, so that no backend waits for another's sessions
// to end.
func CloseAll(bs []*Backend) {
	var wg sync.WaitGroup
	for _, b := range bs {
		wg.Go(b.Close)
	}
	wg.Wait()
}

// Name is the backend name.
func (b *Backend) Name() string { return b.name }

// SafeURL is the backend's endpoint without user info or query (which may hold secrets).
func (b *Backend) SafeURL() string { return b.safeURL }

// Required reports whether a list fails when this backend fails (Config.Required).
func (b *Backend) Required() bool { return b.required }

// Timeout bounds a whole call to the backend (Config.Timeout).
func (b *Backend) Timeout() time.Duration { return b.timeout }

// MaxBytes bounds a response body and each event from the backend (Config.MaxResponseBytes).
func (b *Backend) MaxBytes() int64 { return b.maxBytes }

// Era is the protocol era the backend is known to speak: era.Modern, era.Legacy, or era.Unknown
// until a definitive answer (or its configuration) told.
func (b *Backend) Era() era.Era { return b.legacy.known() }

// Protocol is the revision spoken to the backend: ProtocolVersion, or for a pre-2026 backend
// the one offered (or pinned) in initialize.
func (b *Backend) Protocol() string {
	if b.Era() == era.Legacy {
		return b.legacy.offer
	}
	return ProtocolVersion
}

// Bridge is the bridge to the backend as a pre-2026 server; used only once it is known (or
// pinned) to speak a pre-2026 revision.
func (b *Backend) Bridge() *legacy.Bridge { return b.legacy.bridge }

// CircuitState is the backend's circuit state: one of the Circuit constants, CircuitClosed when
// its breaker is disabled.
func (b *Backend) CircuitState() int { return b.breaker.current() }

// circuitIdentity is the part of a backend's configuration its circuit's record is about: the
// backend it reaches (URL, protocol), how (the headers and credentials it sends, its TLS), and
// the breaker's settings, which give the record its meaning.
type circuitIdentity struct {
	url, protocol string
	headers       map[string]string
	tls           TLSConfig
	auth          AuthConfig
	breaker       BreakerConfig
}

// ShareCircuit makes b, a reloaded configuration's backend, carry on with the circuit breaker of
// prev, the backend of the same name it replaces, when both reach the same backend the same way
// with the same breaker settings (circuitIdentity): a backend whose circuit opened stays failing
// fast rather than getting full traffic again after every reload, and so does each caller whose
// own circuit opened. The two then share one breaker, prev's calls still in flight feeding it,
// and its state changes are reported through b's Env.CircuitState from then on (the state it
// carries on with is b.CircuitState(), not the closed one b's own breaker reported at New). A changed URL, header,
// credential or TLS setting starts afresh: the record was about another connection. It must be
// called before b serves a request; it reports whether the breaker was shared. A function, not
// a method: Backend's method set is at its bound.
func ShareCircuit(b, prev *Backend) bool {
	if b == nil || prev == nil || b.breaker == nil || prev.breaker == nil || b.name != prev.name ||
		!reflect.DeepEqual(b.circuitOf, prev.circuitOf) {
		return false
	}
	prev.breaker.redirect(b.breaker.onChange)
	b.breaker = prev.breaker
	b.waits.carryOn(prev.waits)
	return true
}

// ErrAnsweredWithError is a request the caller made itself (Post) that the backend answered
// with a JSON-RPC error, such as a listen it refused: the backend answered, so Record counts it
// as a backend error, not as a failure of its health.
var ErrAnsweredWithError = errors.New("upstreams: the backend answered with an error")

// outcomeOf maps an error from this package to its Outcome constant.
func outcomeOf(err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, ErrUserTokenNeeded), errors.Is(err, ErrAnsweredWithError):
		return OutcomeBackendError // it answered: it wants a user's token, or refused
	case errors.Is(err, wire.ErrRateLimited):
		return OutcomeRateLimited
	case errors.Is(err, wire.ErrTimeout):
		return OutcomeTimeout
	case errors.Is(err, wire.ErrUnavailable):
		return OutcomeUnavailable
	case errors.Is(err, wire.ErrBadResponse):
		return OutcomeBadResponse
	}
	return OutcomeCanceled
}

// Record reports one finished backend request o the caller made itself (Post: a listen
// stream, a webhook's invocation) to the observer, the breaker and the health state, its outcome
// taken from err and its failure charged as o's (Request.ForCaller, Request.Shared).
func (b *Backend) Record(o *Request, start time.Time, err error) {
	b.record(o.Method, o.charge(), outcomeOf(err), start, err, true)
}

// record reports one finished backend request, charged to charge (Request.charge), to the
// observer and the backend's health; kick asks the health prober to look soon when the
// request failed.
func (b *Backend) record(method, charge, outcome string, start time.Time, err error, kick bool) {
	now := b.env.Now
	if outcome == OutcomeRateLimited {
		noteRateLimit(b, charge, err)
	}
	// The circuit first, then the observer: whoever has seen an outcome observed (a metric, a
	// test waiting for it) finds the circuit already counting it.
	counted := b.breaker.observe(now(), charge, outcome, err)
	if b.env.Observe != nil {
		b.env.Observe(b.name, method, outcome, now().Sub(start))
	}
	if !counted {
		return
	}
	if kick && err != nil && errors.As(err, new(probeWaitErr)) {
		kick = false
	}
	switch outcome {
	case OutcomeOK, OutcomeBackendError, OutcomeRateLimited:
		b.health.up(now)
	case OutcomeUnavailable, OutcomeTimeout, OutcomeBadResponse:
		if charge == chargeNone || wire.NotSent(err) {
			b.health.down(now(), err)
		} else {
			b.health.suspect.Store(true) // one caller's failure: the prober decides
		}
		if !kick || b.env.Kick == nil {
			return
		}
		select {
		case b.env.Kick <- struct{}{}:
		default:
		}
	}
}
