package backend

import (
	"container/list"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// ErrRateLimitWait: the backend answered a recent request with HTTP 429 and the wait it named
// (Retry-After, within wire.MaxRetryAfter) has not passed, so this request was not sent. It
// always comes together with a *wire.RateLimitError carrying the wait left, so it is answered
// as the backend's own 429 would be; nothing counts it as the backend's answer or failure.
var ErrRateLimitWait = errors.New("upstreams: waiting out the backend's Retry-After")

// rateWaits remembers, on one replica, the waits a backend's 429s asked for: until one passes,
// the requests it covers are refused unsent (Post, Stream.legacyStart). For a backend that
// answers as each caller (per-user OAuth, token exchange: its 429 may be about that caller's
// account) a 429 charged to a caller covers only that caller's requests, at most max callers
// remembered (the least recently limited forgotten first); any other 429 (and every one of a
// backend that answers as the gateway) covers every request charged as it was. A nil
// *rateWaits waits for nothing.
type rateWaits struct {
	name      string
	perCaller bool
	max       int
	onBegin   func(upstream string) // a wait began where none was running; must not block

	mu     sync.Mutex
	shared time.Time                // the end of the wait of requests no one caller's
	byKey  map[string]*list.Element // of *callerWait
	order  *list.List               // most recently limited first
}

type callerWait struct {
	key   string
	until time.Time
}

func newRateWaits(name string, perCaller bool, max int, onBegin func(string)) *rateWaits {
	return &rateWaits{name: name, perCaller: perCaller, max: max, onBegin: onBegin, byKey: map[string]*list.Element{}, order: list.New()}
}

// keyOf is the record a request charged to charge is governed by: "" (the shared one) unless
// the backend answers as each caller and the request is one caller's.
func (w *rateWaits) keyOf(charge string) string {
	if !w.perCaller || charge == chargeShared {
		return chargeNone
	}
	return charge
}

// left is what remains at now of the wait governing a request charged to charge; 0 when none.
func (w *rateWaits) left(now time.Time, charge string) time.Duration {
	if w == nil {
		return 0
	}
	key := w.keyOf(charge)
	w.mu.Lock()
	defer w.mu.Unlock()
	until := w.shared
	if key != chargeNone {
		e, ok := w.byKey[key]
		if !ok {
			return 0
		}
		until = e.Value.(*callerWait).until
	}
	return max(until.Sub(now), 0)
}

// refuse is the refusal of a request charged to charge at now, nil when no wait governs it.
func (w *rateWaits) refuse(now time.Time, charge string) error {
	d := w.left(now, charge)
	if d <= 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrRateLimitWait, &wire.RateLimitError{Backend: w.name, RetryAfter: d})
}

// begin records a 429 answered at now to a request charged to charge, asking to wait d; it
// reports whether a wait began where none was running (the one time it is worth a warning).
func (w *rateWaits) begin(now time.Time, charge string, d time.Duration) bool {
	if w == nil || d <= 0 {
		return false
	}
	key, until := w.keyOf(charge), now.Add(d)
	w.mu.Lock()
	defer w.mu.Unlock()
	var fresh bool
	if key == chargeNone {
		fresh = !w.shared.After(now)
		w.shared = later(w.shared, until)
	} else if e, ok := w.byKey[key]; ok {
		r := e.Value.(*callerWait)
		fresh = !r.until.After(now)
		r.until = later(r.until, until)
		w.order.MoveToFront(e)
	} else {
		fresh = true
		w.byKey[key] = w.order.PushFront(&callerWait{key: key, until: until})
		w.trim()
	}
	if fresh && w.onBegin != nil {
		w.onBegin(w.name)
	}
	return fresh
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// admit is the gate a request of b's, charged to charge, passes before it is sent (Post,
// Stream.legacyStart): the wait a 429 asked for, which a health probe waits out too, then the
// circuit breaker, which lets a probe through. A function, not a method: Backend's method set
// is at its bound.
func admit(b *Backend, probe bool, charge string) error {
	now := b.env.Now()
	if err := b.waits.refuse(now, charge); err != nil {
		return err
	}
	return b.breaker.allow(now, probe, charge)
}

// RateLimitWait is what remains at now of the wait b's 429s asked for that governs the
// requests b answers as the gateway (lists of a backend that answers as the gateway, its
// health probe); 0 when none. A function, not a method: Backend's method set is at its bound.
func RateLimitWait(b *Backend) time.Duration {
	return b.waits.left(b.env.Now(), chargeNone)
}

// CallerRateLimitWait is RateLimitWait for the requests of the caller whose key is caller
// (authz.Principal.CallerKey): its own wait on a backend that answers as each caller, else
// the backend's.
func CallerRateLimitWait(b *Backend, caller string) time.Duration {
	return b.waits.left(b.env.Now(), caller)
}

// noteRateLimit starts the wait a 429 in err asks for, charged to charge, and logs its start.
func noteRateLimit(b *Backend, charge string, err error) {
	var rl *wire.RateLimitError
	if b.waits == nil || errors.Is(err, ErrRateLimitWait) || !errors.As(err, &rl) {
		return
	}
	if b.waits.begin(b.env.Now(), charge, rl.RetryAfter) && b.env.Log != nil {
		b.env.Log.Warn("upstream rate limiting: its requests wait out its Retry-After unsent",
			"upstream", b.name, "retryAfter", rl.RetryAfter.String(), "perCaller", b.waits.keyOf(charge) != chargeNone)
	}
}

// carryOn makes w, a reloaded configuration's record, start with prev's waits (ShareCircuit):
// a reload does not send the backend the requests it asked to hold back.
func (w *rateWaits) carryOn(prev *rateWaits) {
	if w == nil || prev == nil || w.perCaller != prev.perCaller {
		return
	}
	prev.mu.Lock()
	shared := prev.shared
	keys := make([]callerWait, 0, prev.order.Len())
	for e := prev.order.Back(); e != nil; e = e.Prev() {
		keys = append(keys, *e.Value.(*callerWait))
	}
	prev.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.shared = later(w.shared, shared)
	for _, k := range keys {
		if _, ok := w.byKey[k.key]; !ok {
			w.byKey[k.key] = w.order.PushFront(&callerWait{key: k.key, until: k.until})
		}
	}
	w.trim()
}

// trim forgets the least recently limited callers past max. w.mu is held.
func (w *rateWaits) trim() {
	for w.order.Len() > w.max {
		old := w.order.Remove(w.order.Back()).(*callerWait)
		delete(w.byKey, old.key)
	}
}

// waitGate is the transport of b's client, which a pre-2026 backend's sessions use (their
// handshakes and pings as well as requests): while a wait governs the requests b answers as the
// gateway, a POST is refused unsent, as Post refuses one. A session's DELETE still goes: it
// frees what the backend holds. A backend that answers as each caller is gated by Post and
// Stream.legacyStart alone, which know whose request it is.
type waitGate struct{ b *Backend }

func (g waitGate) RoundTrip(req *http.Request) (*http.Response, error) {
	if w := g.b.waits; req.Method == http.MethodPost && w != nil && !w.perCaller {
		if err := w.refuse(g.b.env.Now(), chargeNone); err != nil {
			if req.Body != nil {
				req.Body.Close() // a RoundTripper closes the body, even on an error
			}
			return nil, err
		}
	}
	return g.b.rt.RoundTrip(req)
}
