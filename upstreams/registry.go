package upstreams

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/upstreams/direct"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// ProtocolVersion is the MCP revision the gateway speaks to modern backends.
const ProtocolVersion = "2026-07-28"

// DefaultUserAgent is sent to backends when Options.UserAgent is empty.
const DefaultUserAgent = "mcp-gateway"

// Transport pool sizes. One gateway replica may carry hundreds of concurrent calls to one
// backend; keeping that many idle connections avoids a new TCP/TLS handshake per call.
const (
	maxIdleConnsPerHost = 256
	idleConnTimeout     = 90 * time.Second
	tcpKeepAlive        = 30 * time.Second
)

// Outcomes passed to Options.Observe: the part of the gateway's one outcome set
// (internal/outcome) that a backend request can end in, so each is a metric label value as it
// is and means there what it means here.
const (
	// OutcomeOK: the backend answered with a result.
	OutcomeOK = outcome.OK
	// OutcomeBackendError: the backend answered with a JSON-RPC error, relayed to the client.
	OutcomeBackendError = outcome.BackendError
	// OutcomeUnavailable: see ErrUnavailable.
	OutcomeUnavailable = outcome.Unavailable
	// OutcomeTimeout: see ErrTimeout.
	OutcomeTimeout = outcome.Timeout
	// OutcomeBadResponse: see ErrBadResponse.
	OutcomeBadResponse = outcome.BadResponse
	// OutcomeCanceled: the caller went away or closed the stream before the final response.
	OutcomeCanceled = outcome.Canceled
)

// Sealer seals and opens the gateway's list cursors. The gateway passes an AEAD sealer bound to
// the cursor purpose; a token that does not open must return an error.
type Sealer interface {
	// Seal returns an opaque token carrying plaintext.
	Seal(plaintext []byte) (string, error)
	// Open returns the plaintext of a token Seal produced, or an error.
	Open(token string) ([]byte, error)
}

// Options are the dependencies of a Registry.
type Options struct {
	// Logger receives backend failures (never tokens, secrets or argument values).
	// Nil discards.
	Logger *slog.Logger
	// Cursors seals and opens merged-list cursors. Required.
	Cursors Sealer
	// Transport replaces the per-backend HTTP transports (tests). Optional.
	Transport http.RoundTripper
	// Observe, when set, is called once per backend request with its outcome (one of the
	// Outcome constants), the MCP method and the time until the final response or failure.
	Observe func(upstream, method, outcome string, d time.Duration)
	// Clock returns the current time; nil means time.Now. It drives cache expiry and health
	// timestamps.
	Clock func() time.Time
	// UserAgent is sent to backends. Empty means DefaultUserAgent.
	UserAgent string
	// CircuitState, when set, is called with a backend's circuit state (CircuitClosed,
	// CircuitOpen or CircuitHalfOpen) once at New and on every change, for a gauge. It runs
	// under the breaker's lock: it must not block or call into the Registry.
	CircuitState func(upstream string, state int)
	// OnHealth, when set, is called when a backend's health changes (and with the first probe's
	// result), for an up/down gauge. It must not block.
	OnHealth func(upstream string, up bool)
	// OnTools, when set, is called with a backend's complete tools/list (backend-side names)
	// each time one is fetched from the backend (not on cache hits).
	OnTools func(upstream string, tools []string)
	// CacheResult, when set, is called once per backend part of a list request: hit is true
	// when that backend's list came from the cache without a backend request.
	CacheResult func(hit bool)
	// OnListChanged, when set, is called with each list_changed notification (its method) a
	// backend sends on a listen stream through this Registry, after the Registry has dropped
	// its own cached copies; pass it to the other replicas' ListChanged. It runs on the backend
	// stream's goroutine before the stream's subscribers hear the notification, so that they
	// find every replica's copy gone when they list again; it must return promptly (bounded),
	// since it delays them.
	OnListChanged func(upstream, method string)
	// MaxResultBytesInFlight bounds the buffer memory of the backend responses being relayed
	// at once (charged as their bytes arrive); a response that would pass it fails with
	// ErrResultBudget. Zero means DefaultMaxResultBytesInFlight, negative unbounded.
	MaxResultBytesInFlight int64
	// Pins, when set, checks every tools, prompts and resource templates list and the server
	// instructions against the tool-definition pins (pins.go). Nil: no pinning.
	Pins *pins.Guard
}

// Registry is the set of configured backends. It is safe for concurrent use.
type Registry struct {
	ns             *names.Space
	backends       []*backend
	byName         map[string]*backend
	log            *slog.Logger
	cursors        Sealer
	observe        func(upstream, method, outcome string, d time.Duration)
	onTools        func(upstream string, tools []string)
	onListChanged  func(upstream, method string)
	now            func() time.Time
	pageSize       int
	relay          RelayCapabilities // extensions and experimental capabilities discover passes on
	healthInterval time.Duration
	kick           chan struct{}
	cache          *listCache
	toolHeaders    toolHeaderIndexes // the tools' x-mcp-header bindings (toolheaders.go)
	pins           *pins.Guard       // nil without pinning (pins.go)
	pinViews       pinViews          // the pin verdicts of the newest lists (pins.go)
	results        *bodyread.Budget  // responses being relayed (call.go)
	closeOnce      sync.Once
}

// backend is one configured upstream with its compiled client.
type backend struct {
	name     string
	url      string
	safeURL  string // without user info and query, for reports
	timeout  time.Duration
	required bool
	maxBytes int64
	// header holds the headers every request carries: Content-Type, Accept, User-Agent and
	// the configured static ones. Requests share its value slices and never modify them.
	header http.Header
	// template is a POST to url with nothing else set; each request is a shallow copy of it, so
	// the URL is parsed once. nil when url does not parse (Config.Validate refuses that).
	template *http.Request
	client   *http.Client
	// rt is the client's transport, used directly on the hot path: http.Client adds redirect
	// bookkeeping (a header copy per request) that a backend call never needs, since redirects
	// are refused anyway.
	rt        http.RoundTripper
	transport *http.Transport   // nil when Options.Transport was given
	direct    *direct.Transport // the transport of a plain-http backend, else nil
	health    health
	disc      discoverCache
	breaker   *breaker     // nil when disabled
	creds     *credentials // nil without auth
	retry     retryPolicy
	legacy    *legacyState // era detection and the session pool for pre-2026 backends
}

// New compiles cfg into a Registry. It validates cfg first.
func New(cfg Config, opts Options) (*Registry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Cursors == nil {
		return nil, ErrNoCursorSealer
	}
	r := &Registry{
		ns:             names.New(cfg.separator(), cfg.Namespace.NoPrefix, upstreamNames(cfg.Upstreams)),
		byName:         make(map[string]*backend, len(cfg.Upstreams)),
		log:            opts.Logger,
		cursors:        opts.Cursors,
		observe:        opts.Observe,
		onTools:        opts.OnTools,
		onListChanged:  opts.OnListChanged,
		pins:           opts.Pins,
		now:            opts.Clock,
		pageSize:       cfg.PageSize,
		relay:          cfg.RelayCapabilities,
		healthInterval: orDuration(cfg.HealthInterval, DefaultHealthInterval),
		kick:           make(chan struct{}, 1),
		results:        bodyread.NewBudget(orInt64(opts.MaxResultBytesInFlight, DefaultMaxResultBytesInFlight)),
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.pageSize == 0 {
		r.pageSize = DefaultPageSize
	}
	ua := opts.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	r.cache = newListCache(cfg.Cache, r.now, opts.CacheResult)
	for _, uc := range cfg.Upstreams {
		b := newBackend(uc, ua, opts.Transport)
		if onHealth := opts.OnHealth; onHealth != nil {
			name := uc.Name
			b.health.onChange = func(up bool) { onHealth(name, up) }
		}
		if err := r.equip(b, &uc, &opts); err != nil {
			r.Close()
			return nil, err
		}
		r.backends = append(r.backends, b)
		r.byName[b.name] = b
		if max := r.results.Max(); max > 0 && b.maxBytes >= max {
			r.log.Warn("a response this backend may send cannot fit the replica's budget for results in flight; it would be refused with 503",
				"upstream", b.name, "max_response_bytes", b.maxBytes, "max_result_bytes_in_flight", max)
		}
	}
	return r, nil
}

// upstreamNames returns the names of ups, in order.
func upstreamNames(ups []UpstreamConfig) []string {
	out := make([]string, len(ups))
	for i := range ups {
		out[i] = ups[i].Name
	}
	return out
}

func newBackend(uc UpstreamConfig, userAgent string, rt http.RoundTripper) *backend {
	b := &backend{
		name:     uc.Name,
		url:      uc.URL,
		safeURL:  redactURL(uc.URL),
		timeout:  orDuration(uc.Timeout, DefaultTimeout),
		required: uc.Required,
		maxBytes: uc.MaxResponseBytes,
		header: http.Header{
			"Content-Type": {"application/json"},
			"Accept":       {"application/json, text/event-stream"},
			"User-Agent":   {userAgent},
		},
	}
	if b.maxBytes == 0 {
		b.maxBytes = DefaultMaxResponseBytes
	}
	b.legacy = newLegacyState(uc.Protocol, userAgent)
	for k, v := range uc.Headers {
		b.header.Set(k, v)
	}
	if tmpl, err := http.NewRequest(http.MethodPost, uc.URL, nil); err == nil {
		b.template = tmpl
	}
	if rt == nil {
		b.transport = newTransport(orDuration(uc.ConnectTimeout, DefaultConnectTimeout))
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

func newTransport(connect time.Duration) *http.Transport {
	d := &net.Dialer{Timeout: connect, KeepAlive: tcpKeepAlive}
	return &http.Transport{
		// No Proxy: packages read no environment; a proxy would be configured explicitly.
		DialContext:         d.DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        4 * maxIdleConnsPerHost,
		MaxIdleConnsPerHost: maxIdleConnsPerHost,
		IdleConnTimeout:     idleConnTimeout,
		TLSHandshakeTimeout: connect,
	}
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery = nil, "", false
	return u.String()
}

// Close releases idle connections. In-flight calls are ended by their contexts.
func (r *Registry) Close() {
	r.closeOnce.Do(func() {
		r.closeLegacy() // ends the backends' sessions while connections are still pooled
		for _, b := range r.backends {
			if b.transport != nil {
				b.transport.CloseIdleConnections()
			}
			if b.direct != nil {
				b.direct.CloseIdleConnections()
			}
			b.creds.close()
		}
	})
}

// Upstreams returns the configured backend names in configuration order.
func (r *Registry) Upstreams() []string {
	out := make([]string, len(r.backends))
	for i, b := range r.backends {
		out[i] = b.name
	}
	return out
}

func (r *Registry) backend(name string) (*backend, error) {
	b, ok := r.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w: upstream %q is not configured", ErrUnknownName, name)
	}
	return b, nil
}

// outcomeOf maps an error from this package to its Outcome constant.
func outcomeOf(err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, ErrTimeout):
		return OutcomeTimeout
	case errors.Is(err, ErrUnavailable):
		return OutcomeUnavailable
	case errors.Is(err, ErrBadResponse):
		return OutcomeBadResponse
	}
	return OutcomeCanceled
}

// record reports one finished backend request to the observer and the backend's health.
func (r *Registry) record(b *backend, method, outcome string, start time.Time, err error, kick bool) {
	if r.observe != nil {
		r.observe(b.name, method, outcome, r.now().Sub(start))
	}
	if !b.breaker.observe(r.now(), outcome, err) {
		return
	}
	switch outcome {
	case OutcomeOK, OutcomeBackendError:
		b.health.up(r.now)
	case OutcomeUnavailable, OutcomeTimeout, OutcomeBadResponse:
		b.health.down(r.now(), err)
		if !kick {
			return
		}
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

func orInt64(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}
