package embeddings

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Observer records what the embedder does (metrics.Embeddings implements it). Its label values
// are closed sets: kind is "query" or "tools", reason one of Reasons() or "" for success.
type Observer interface {
	// Request is one request to the endpoint, its kind, how long it took and its outcome.
	Request(kind string, took time.Duration, texts int, reason string)
	// Fallback is one search ranked lexically although embeddings are on, and why.
	Fallback(reason string)
	// CacheBytes is the size of the cache of tool vectors now.
	CacheBytes(n int64)
}

// Deps are what an Embedder needs besides its configuration.
type Deps struct {
	// Log receives the rate-limited failure lines; nil: slog.Default.
	Log *slog.Logger
	// Observer records metrics; nil: none.
	Observer Observer
	// CacheEvicted, when set, is called for each vector dropped from the cache for room: own
	// when its caller's share made it go. It is called with the cache locked and must not
	// block.
	CacheEvicted func(own bool)
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Transport carries the requests; nil: a clone of http.DefaultTransport.
	Transport http.RoundTripper
}

// Embedder embeds tool texts (per catalog version, in the background, cached per replica by
// the digest of each text) and queries (per search, within Timeout), and decides when a search
// falls back to the lexical ranking. It is safe for concurrent use.
type Embedder struct {
	cfg    Config
	client client
	obs    Observer
	now    func() time.Time
	guard  *guard
	caller callerWindow // each caller's queries
	// texts is each caller's share of the texts sent, queries and its private catalogs' tool
	// texts together: ShareDivisor of MaxTextsPerMinute (see request).
	texts  callerWindow
	cache  *cache
	logged logLimiter
	log    *slog.Logger
	// dims is the vectors' length: Config.Dimensions, or the first answer's.
	mu   sync.Mutex
	dims int
	// ctx ends with Close, stopping background work.
	ctx    context.Context
	cancel context.CancelFunc
}

// New compiles cfg (validated and enabled) with the API key (may be empty: Ollama, TEI and vLLM
// often take none).
func New(cfg Config, apiKey string, deps Deps) *Embedder {
	cfg = cfg.WithDefaults()
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Transport == nil {
		deps.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if deps.Observer == nil {
		deps.Observer = nopObserver{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Embedder{
		cfg:    cfg,
		client: client{cfg: cfg, http: &http.Client{Transport: deps.Transport, CheckRedirect: noRedirects}, now: deps.Now},
		obs:    deps.Observer, now: deps.Now, log: deps.Log,
		guard: newGuard(cfg, deps.Now), cache: newCache(cfg.MaxCacheBytes, deps.CacheEvicted),
		dims: cfg.Dimensions, ctx: ctx, cancel: cancel, caller: callerWindow{per: cfg.MaxQueriesPerCallerPerMinute},
		texts: callerWindow{per: textShare(cfg)},
	}
	e.client.setKey(apiKey)
	return e
}

// noRedirects keeps the key and the texts from following a redirect elsewhere.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Close stops the background work (a configuration reload replaces the embedder).
func (e *Embedder) Close() { e.cancel() }

// Fusion is the configured fusion: its method ("rrf" or "blend"), the dense ranking's weight and
// reciprocal-rank fusion's K.
func (e *Embedder) Fusion() (method string, weight, k float64) {
	return e.cfg.Fusion, e.cfg.Weight, e.cfg.RRFK
}

// textShare is the texts one caller may have sent in a minute: 1/ShareDivisor of the replica's
// MaxTextsPerMinute, at least one.
func textShare(cfg Config) int { return max(cfg.MaxTextsPerMinute/ShareDivisor, 1) }

// request embeds texts with the guards: not while backing off, within the budget and the bound
// on requests in flight; a request the guards refuse fails at once, without waiting. The texts
// of caller ("" for no caller: a public catalog's tools) count against its share of the budget
// (textShare) first, so that a caller whose searches make many texts to embed (a private
// catalog that keeps changing, a stream of queries) spends its own share, not everyone's: past
// it, its request is refused (ReasonCaller) and its search ranks lexically, as it does past
// the whole budget.
func (e *Embedder) request(parent context.Context, kind, caller string, texts []string, timeout time.Duration) ([][]float32, error) {
	if caller != "" && !e.texts.take(caller, len(texts), e.now()) {
		return nil, &Error{Reason: ReasonCaller}
	}
	if err := e.guard.admit(len(texts)); err != nil {
		if caller != "" {
			e.texts.give(caller, len(texts))
		}
		return nil, err
	}
	defer e.guard.release()
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	e.mu.Lock()
	dims := e.dims
	e.mu.Unlock()
	start := e.now()
	vecs, err := e.client.embed(ctx, texts, dims)
	took := e.now().Sub(start)
	if err != nil && errors.Is(parent.Err(), context.Canceled) {
		// The caller went away (or the embedder closed): not the endpoint's failure, and no
		// reason to back off for everyone.
		return nil, &Error{Reason: ReasonCanceled}
	}
	if err != nil {
		e.fail(kind, took, len(texts), err)
		return nil, err
	}
	e.guard.succeeded()
	e.mu.Lock()
	if e.dims == 0 {
		e.dims = len(vecs[0])
	}
	e.mu.Unlock()
	e.obs.Request(kind, took, len(texts), "")
	return vecs, nil
}

// unsent reports whether err is request's refusal of texts it did not send: their caller's
// share, the replica's budget or bound on requests in flight, or a back-off.
func unsent(err error) bool {
	var ee *Error
	return errors.As(err, &ee) && (ee.Reason == ReasonCaller || ee.Reason == ReasonBudget || ee.Reason == ReasonBackoff)
}

// fail records a failed request, backs off and logs (rate-limited, naming no key and no text).
func (e *Embedder) fail(kind string, took time.Duration, n int, err error) {
	reason := reasonOf(err)
	var retry time.Duration
	status := 0
	var ee *Error
	if errors.As(err, &ee) {
		retry, status = ee.RetryAfter, ee.Status
	}
	wait := e.guard.failed(retry)
	e.obs.Request(kind, took, n, reason)
	if suppressed, ok := e.logged.allow(e.now()); ok {
		e.log.Warn("embeddings endpoint failed; searches rank lexically until it answers again",
			"reason", reason, "status", status, "kind", kind, "backoff", wait.String(), "suppressed", suppressed)
	}
}

// Query embeds one query of caller ("": none) within Timeout.
func (e *Embedder) Query(ctx context.Context, caller, text string) ([]float32, error) {
	vecs, err := e.request(ctx, "query", caller, []string{text}, e.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

// Probe embeds one fixed text, outside the guards and the budget (check-config --online), and
// returns the vectors' length.
func (e *Embedder) Probe(ctx context.Context) (dims int, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	vecs, err := e.client.embed(ctx, []string{"check-config probe"}, e.cfg.Dimensions)
	if err != nil {
		return 0, err
	}
	return len(vecs[0]), nil
}

// digest keys the cache (a tool's text, whatever tool or catalog version it is in) and the
// callers' shares (a caller's name, of any length, in a fixed size).
func digest(text string) [sha256.Size]byte { return sha256.Sum256([]byte(text)) }

type nopObserver struct{}

func (nopObserver) Request(string, time.Duration, int, string) {}
func (nopObserver) Fallback(string)                            {}
func (nopObserver) CacheBytes(int64)                           {}

// logLimiter lets one line through per logEvery, counting the others.
type logLimiter struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// logEvery is the least time between two failure lines.
const logEvery = 30 * time.Second

func (l *logLimiter) allow(now time.Time) (suppressed int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < logEvery {
		l.suppressed++
		return 0, false
	}
	l.last, suppressed, l.suppressed = now, l.suppressed, 0
	return suppressed, true
}
