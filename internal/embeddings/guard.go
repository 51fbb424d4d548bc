package embeddings

import (
	"crypto/sha256"
	"sync"
	"time"
)

// Backoff after failures: the first wait, and the longest. A dead endpoint is then asked at
// most once per maxBackoff, not once per search.
const (
	minBackoff = time.Second
	maxBackoff = 5 * time.Minute
)

// guard decides whether a request may go to the endpoint now: not while backing off after a
// failure, not past the budget of texts per minute, not past the bound on requests in flight.
type guard struct {
	now func() time.Time

	mu        sync.Mutex
	until     time.Time     // no request before this
	backoff   time.Duration // the next failure's wait
	tokens    float64       // texts that may be sent now
	perMinute float64
	filled    time.Time
	inflight  int
	maxFlight int
}

func newGuard(cfg Config, now func() time.Time) *guard {
	return &guard{now: now, backoff: minBackoff, perMinute: float64(cfg.MaxTextsPerMinute),
		tokens: float64(cfg.MaxTextsPerMinute), filled: now(), maxFlight: cfg.MaxConcurrent}
}

// admit takes n texts of the budget and a request slot, or says why not. A granted request is
// ended with release.
func (g *guard) admit(n int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if now.Before(g.until) {
		return &Error{Reason: ReasonBackoff}
	}
	if el := now.Sub(g.filled); el > 0 {
		g.tokens = min(g.perMinute, g.tokens+g.perMinute*el.Minutes())
		g.filled = now
	}
	if g.inflight >= g.maxFlight || g.tokens < float64(n) {
		return &Error{Reason: ReasonBudget}
	}
	g.tokens -= float64(n)
	g.inflight++
	return nil
}

func (g *guard) release() {
	g.mu.Lock()
	g.inflight--
	g.mu.Unlock()
}

// succeeded ends backing off.
func (g *guard) succeeded() {
	g.mu.Lock()
	g.backoff, g.until = minBackoff, time.Time{}
	g.mu.Unlock()
}

// failed starts (or doubles) backing off, for at least what the endpoint asked (Retry-After),
// and returns the wait.
func (g *guard) failed(retryAfter time.Duration) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	wait := max(g.backoff, retryAfter)
	g.until = g.now().Add(wait)
	g.backoff = min(2*g.backoff, maxBackoff)
	return wait
}

// maxBatch is the largest batch the budget can ever grant.
func (g *guard) maxBatch(size int) int { return max(1, min(size, int(g.perMinute))) }

// maxTrackedCallers bounds the callers whose queries are counted in one minute on this replica;
// past it a caller not yet counted ranks lexically until the minute ends.
const maxTrackedCallers = 10000

// callerWindow counts what each caller sent in the current minute (queries, or texts): a
// caller's share of the budget. Its memory is at most maxTrackedCallers entries of a fixed
// size, dropped every minute: a caller is kept as the digest of its name (issuer and subject,
// as long as its token makes them), never the name itself.
type callerWindow struct {
	per int

	mu     sync.Mutex
	start  time.Time
	counts map[[sha256.Size]byte]int
}

// take counts n of caller's, or reports that its share of this minute cannot hold them.
func (w *callerWindow) take(caller string, n int, now time.Time) bool {
	key := digest(caller) // outside the lock
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counts == nil || now.Sub(w.start) >= time.Minute || now.Before(w.start) {
		w.start, w.counts = now, map[[sha256.Size]byte]int{}
	}
	c, ok := w.counts[key]
	if c+n > w.per || !ok && len(w.counts) >= maxTrackedCallers {
		return false
	}
	w.counts[key] = c + n
	return true
}

// give hands back n that take counted for caller and that were not sent after all (the
// replica's budget refused them).
func (w *callerWindow) give(caller string, n int) {
	key := digest(caller)
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.counts[key]; ok {
		w.counts[key] = max(c-n, 0)
	}
}
