package upstreams

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/catalog"
	"github.com/mcp-gateway/gateway/upstreams/listen"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Sealer seals and opens the gateway's list cursors (see catalog.Sealer).
type Sealer = catalog.Sealer

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
	// NotificationDropped, when set, is called for each notification of a call's response
	// stream that a backend sent past its MaxNotificationsPerCall and that was not relayed. It
	// must not block.
	NotificationDropped func(upstream string)
	// Clock returns the current time; nil means time.Now. It drives cache expiry and health
	// timestamps.
	Clock func() time.Time
	// UserAgent is sent to backends. Empty means DefaultUserAgent.
	UserAgent string
	// CircuitState, when set, is called with a backend's circuit state (CircuitClosed,
	// CircuitOpen or CircuitHalfOpen) once at New and on every change, for a gauge. It runs
	// under the breaker's lock: it must not block or call into the Registry.
	CircuitState func(upstream string, state int)
	// CallerCircuit, when set, is called with one of the backend.Caller events of a backend's
	// per-caller circuits (BreakerConfig.MinCallers); it runs under the breaker's lock and must
	// not block.
	CallerCircuit func(upstream, event string)
	// RateLimited, when set, is called when a backend's 429 starts a wait (its Retry-After)
	// where none was running, for that backend or, for one that answers as each caller, for
	// that caller; it runs under a lock and must not block.
	RateLimited func(upstream string)
	// OnHealth, when set, is called when a backend's health changes (and with the first probe's
	// result), for an up/down gauge. It must not block.
	OnHealth func(upstream string, up bool)
	// OnTools, when set, is called with a backend's complete tools/list (backend-side names)
	// each time one is fetched from the backend (not on cache hits).
	OnTools func(upstream string, tools []string)
	// CacheResult, when set, is called once per backend part of a list request: hit is true
	// when that backend's list came from the cache without a backend request.
	CacheResult func(hit bool)
	// CacheEvicted, when set, is called for each entry of the catalog's caches evicted to make
	// room (catalog.Options.CacheEvicted): cache names the cache (catalog.CacheList, …), own is
	// true when the caller's share made one of its own entries go, false when the total bound
	// did. It must not block.
	CacheEvicted func(cache string, own bool)
	// OnListChanged, when set, is called with the list_changed notifications (their method) a
	// backend sends on a listen stream through this Registry, after the Registry has dropped
	// its own cached copies: the first of a backend and kind at once, then at most once a
	// second, the notifications of that second as one (changeNotices); pass them to the other
	// replicas' ListChanged. It runs on the backend
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
	// UserTokens hands out the callers' tokens of per-user backends (auth.type userOAuth).
	UserTokens UserTokens
	// ToolSchemas keeps each listed tool's inputSchema and outputSchema in the tool index
	// (ToolHeaders.Schemas), for the schema guardrail.
	ToolSchemas bool
}

// Registry is the set of configured backends. It is safe for concurrent use.
type Registry struct {
	ns       *names.Space
	backends []*backend.Backend
	byName   map[string]*backend.Backend
	// pinnedLegacy holds the backends configured to speak a pre-2026 revision: an era that
	// never changes (a learnt one may, PinnedLegacy).
	pinnedLegacy   map[string]bool
	catalog        *catalog.Catalog // the merged lists and what hangs on them
	listens        *listen.Source   // what listens need of the backends
	log            *slog.Logger
	notices        *changeNotices // passes list_changed on (Options.OnListChanged); nil without it
	now            func() time.Time
	relay          RelayCapabilities // extensions and experimental capabilities discover passes on
	healthInterval time.Duration
	kick           chan struct{}
	results        *bodyread.Budget // responses being relayed (backend.Stream)
	callers        *bodyread.Shares // each caller's share of results (resultShares); nil: no shares
	apps           bool             // Config.Apps.Enabled
	closeOnce      sync.Once
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
		byName:         make(map[string]*backend.Backend, len(cfg.Upstreams)),
		pinnedLegacy:   map[string]bool{},
		log:            opts.Logger,
		now:            opts.Clock,
		relay:          cfg.RelayCapabilities,
		apps:           cfg.Apps.Enabled,
		healthInterval: orDuration(cfg.HealthInterval, DefaultHealthInterval),
		kick:           make(chan struct{}, 1),
		results:        bodyread.NewBudget(orInt64(opts.MaxResultBytesInFlight, DefaultMaxResultBytesInFlight)),
	}
	if opts.OnListChanged != nil {
		r.notices = newChangeNotices(opts.OnListChanged)
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.now == nil {
		r.now = time.Now
	}
	env := &backend.Env{Log: r.log, Now: r.now, Names: r.ns, Results: r.results, Kick: r.kick, UserAgent: opts.UserAgent,
		Transport: opts.Transport, Observe: opts.Observe, NotificationDropped: opts.NotificationDropped, CircuitState: opts.CircuitState, CallerCircuit: opts.CallerCircuit, RateLimited: opts.RateLimited, OnHealth: opts.OnHealth,
		Apps: cfg.Apps.Enabled, UserTokens: opts.UserTokens}
	for _, uc := range cfg.Upstreams {
		b, err := backend.New(uc, env)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.backends = append(r.backends, b)
		r.byName[b.Name()] = b
		// Known before any request only when configured.
		r.pinnedLegacy[b.Name()] = b.Era() == era.Legacy
		if max := r.results.Max(); max > 0 && b.MaxBytes() >= max {
			r.log.Warn("a response this backend may send cannot fit the replica's budget for results in flight; it would be refused with 503",
				"upstream", b.Name(), "max_response_bytes", b.MaxBytes(), "max_result_bytes_in_flight", max)
		}
	}
	r.callers = resultShares(r.results, r.backends)
	env.CallerResults = r.callers // read by the backends' calls only, none of which has started
	r.catalog = catalog.New(r.backends, r.ns, catalog.Options{Cursors: opts.Cursors, PageSize: cfg.PageSize, Cache: cfg.Cache,
		Log: r.log, Now: r.now, OnTools: opts.OnTools, CacheResult: opts.CacheResult, CacheEvicted: opts.CacheEvicted, Pins: opts.Pins, Apps: cfg.Apps.Enabled,
		KeepSchemas: opts.ToolSchemas, Results: r.results, CallerResults: r.callers})
	r.listens = listenSource(r)
	return r, nil
}

// ShareCircuits makes each backend of r carry on with the circuit breaker of prev's backend of
// the same name, when it reaches the same backend the same way (backend.ShareCircuit), so a
// reload neither gives a dead backend full traffic again nor lets a caller whose own circuit
// opened start afresh. Call it before r serves a request. A function, not a method: Registry's
// method set is at its bound.
func ShareCircuits(r, prev *Registry) {
	if r == nil || prev == nil {
		return
	}
	for _, b := range r.backends {
		backend.ShareCircuit(b, prev.byName[b.Name()])
	}
}

// upstreamNames returns the names of ups, in order.
func upstreamNames(ups []UpstreamConfig) []string {
	out := make([]string, len(ups))
	for i := range ups {
		out[i] = ups[i].Name
	}
	return out
}

// Close ends the backends' pre-2026 sessions and releases idle connections. In-flight calls are
// ended by their contexts.
func (r *Registry) Close() {
	r.closeOnce.Do(func() {
		if r.notices != nil {
			r.notices.close()
		}
		backend.CloseAll(r.backends)
	})
}

// Upstreams returns the configured backend names in configuration order.
func (r *Registry) Upstreams() []string {
	out := make([]string, len(r.backends))
	for i, b := range r.backends {
		out[i] = b.Name()
	}
	return out
}

// backend returns the backend named upstream, or ErrUnknownName.
func (r *Registry) backend(upstream string) (*backend.Backend, error) {
	b, ok := r.byName[upstream]
	if !ok {
		return nil, fmt.Errorf("%w: upstream %q is not configured", ErrUnknownName, upstream)
	}
	return b, nil
}

// Call forwards c to its backend and returns the response stream once the backend has answered
// with headers (and, for a JSON answer, its whole body); see backend.Backend.Call.
//
// The response is read within the share of the replica's result budget of c.Bound, the caller,
// until the Stream is closed (resultShares).
func (r *Registry) Call(ctx context.Context, c *Call) (*Stream, error) {
	b, err := r.backend(c.Target.Upstream)
	if err != nil {
		return nil, err
	}
	return b.Call(ctx, c)
}

// ResultBytesInFlight is the buffer memory held now by backend responses being relayed.
func (r *Registry) ResultBytesInFlight() int64 { return r.results.InUse() }

// TakeResultBytes charges n bytes of a copy an edge makes of a response it relays (a result
// reshaped for an older protocol version) to the same budget as the responses themselves,
// within the share of the caller whose key (Call.Bound) is key; when they do not fit it says
// whose bound it was (bodyread.ErrShare: the caller's share; bodyread.ErrBudget: the replica's).
// ReturnResultBytes gives them back once the copy is written.
func (r *Registry) TakeResultBytes(key string, n int64) error {
	if r.callers == nil {
		return r.results.Charge(n)
	}
	err := r.callers.Take(key).Charge(n) // the key "": the replica's budget alone
	if err != nil {
		r.callers.Give(key)
	}
	return err // taken, the share stays held until ReturnResultBytes
}

// ReturnResultBytes gives back n bytes TakeResultBytes charged for key.
func (r *Registry) ReturnResultBytes(key string, n int64) {
	if r.callers == nil {
		r.results.Return(n)
		return
	}
	r.callers.Return(key, n) // and the share TakeResultBytes held
}

// CircuitStates returns each backend's circuit state by backend name: one of the Circuit
// constants, CircuitClosed for a backend whose breaker is disabled.
func (r *Registry) CircuitStates() map[string]int {
	out := make(map[string]int, len(r.backends))
	for _, b := range r.backends {
		out[b.Name()] = b.CircuitState()
	}
	return out
}

// ExchangesTokens reports whether the named backend is configured for RFC 8693 token exchange,
// the one case in which the caller's verified token must be passed as Call.SubjectToken. The
// gateway passes it to no other backend.
func (r *Registry) ExchangesTokens(upstream string) bool {
	b, ok := r.byName[upstream]
	return ok && b.ExchangesTokens()
}

// PinnedLegacy reports whether the named backend is configured to speak a pre-2026 revision
// (upstreams[].protocol): whatever request it gets is what era.ToLegacyRequest leaves of it. A
// learnt era is not enough to rely on for that: a later answer may change it (a backend
// upgraded), and a request checked as a pre-2026 one could then go out in the 2026-07-28 shape.
func (r *Registry) PinnedLegacy(upstream string) bool { return r.pinnedLegacy[upstream] }

// PerUser reports whether the named backend's callers connect their own accounts (auth.type
// userOAuth): a call needs the caller's token, which Call.UserToken carries.
func (r *Registry) PerUser(upstream string) bool {
	b, ok := r.byName[upstream]
	return ok && b.PerUser()
}

// AnyExchangesTokens reports whether some backend uses token exchange, so a list (which fans out
// to every backend) needs ListRequest.SubjectToken.
func (r *Registry) AnyExchangesTokens() bool {
	for _, b := range r.backends {
		if b.ExchangesTokens() {
			return true
		}
	}
	return false
}

func orInt64(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

func orDuration(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// One caller's share of the result budget: an eighth of it (resultShareDivisor, the fixed share
// the gateway gives a caller of its caches, of tool search's texts and of the interceptors'
// answers), and at least resultHold times the largest maxResponseBytes configured, what one
// response may hold for a moment while it is read (a buffer grown past the bytes that arrived,
// next to the one it replaces), so that a share always holds one response the configuration
// allows. Without shares one caller's calls, results unread, held the whole budget and every
// other caller's large result was refused.
const (
	resultShareDivisor = sharelru.CallerShareDivisor
	resultHold         = 3
)

// resultShares returns the callers' shares of results for backends: nil, no shares, when
// results is unbounded or a share would be all of it.
func resultShares(results *bodyread.Budget, backends []*backend.Backend) *bodyread.Shares {
	total := results.Max()
	if total <= 0 {
		return nil
	}
	share := total / resultShareDivisor
	for _, b := range backends {
		share = max(share, resultHold*b.MaxBytes())
	}
	if share >= total {
		return nil
	}
	return bodyread.NewShares(results, share)
}
