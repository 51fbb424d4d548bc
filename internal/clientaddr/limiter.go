package clientaddr

import (
	"container/list"
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
)

// Defaults of LimiterConfig.
const (
	// DefaultMaxUnauthenticated is how many requests one client address may have in flight
	// before they are authenticated (their bodies arriving, their tokens being checked), or on
	// a route that takes no token.
	DefaultMaxUnauthenticated = 64
	// DefaultFailedAuthPerMinute is the rate at which one client address earns back failed
	// authentications once its burst is spent.
	DefaultFailedAuthPerMinute = 30
	// DefaultFailedAuthBurst is how many failed authentications one client address may have in
	// a row before it is slowed to DefaultFailedAuthPerMinute.
	DefaultFailedAuthBurst = 30
	// DefaultMaxTracked is how many client addresses a replica keeps state for: an entry is
	// at most EntryBytes, so 65,536 hold at most 20 MiB.
	DefaultMaxTracked = 65536
)

// EntryBytes is an upper estimate of what one tracked client address costs a replica: its
// entry, its list element, its map slot and its share of the body budget (docs/limits.md;
// TestEntryBytes measures it).
const EntryBytes = 320

// LimiterConfig bounds each client address's unauthenticated work. Zero fields take their
// defaults; a negative one switches that bound off.
type LimiterConfig struct {
	MaxUnauthenticated  int
	FailedAuthPerMinute int
	FailedAuthBurst     int
	MaxTracked          int
	// MaxBodyBytes is one client address's share of the replica's body budget (the budget
	// NewLimiter is given) while its requests are not authenticated; 0 or negative: no share.
	// It has no default here: it depends on the replica's budget.
	MaxBodyBytes int64
}

// WithDefaults returns c with zero fields set to their defaults.
func (c LimiterConfig) WithDefaults() LimiterConfig {
	if c.MaxUnauthenticated == 0 {
		c.MaxUnauthenticated = DefaultMaxUnauthenticated
	}
	if c.FailedAuthPerMinute == 0 {
		c.FailedAuthPerMinute = DefaultFailedAuthPerMinute
	}
	if c.FailedAuthBurst == 0 {
		c.FailedAuthBurst = DefaultFailedAuthBurst
	}
	if c.MaxTracked == 0 {
		c.MaxTracked = DefaultMaxTracked
	}
	return c
}

// Off reports whether c bounds nothing, when a Limiter is not worth building.
func (c LimiterConfig) Off() bool {
	return c.MaxUnauthenticated < 0 && c.FailedAuthPerMinute < 0
}

// Limiter holds, per client address group (Resolver.Key), the requests in flight that are not
// authenticated yet and a token bucket of failed authentications. It is per replica, in a
// bounded LRU of MaxTracked groups: the least recently seen group is forgotten first. The
// state is deliberately not shared through Redis: the bound protects this replica's CPU and
// connections, which are per replica too, and a store round trip before authentication would
// hand unauthenticated clients a way to load the store. A nil *Limiter bounds nothing.
type Limiter struct {
	maxInFlight int
	rate        float64 // tokens per second; 0 without the failure bound
	burst       float64
	maxTracked  int
	maxBody     int64
	bodies      *bodyread.Budget // the replica's; each entry has a share of it
	now         func() time.Time

	mu      sync.Mutex
	entries map[netip.Prefix]*list.Element
	lru     list.List // of *entry, most recent at the front
}

type entry struct {
	key      netip.Prefix
	inFlight int
	tokens   float64
	at       time.Time // when tokens was last brought up to date
	bodies   *bodyread.Budget
}

// NewLimiter builds the limiter of c (with its defaults); bodies is the replica's budget for
// request bodies, of which each client address has a share of c.MaxBodyBytes; now is the clock.
func NewLimiter(c LimiterConfig, bodies *bodyread.Budget, now func() time.Time) *Limiter {
	c = c.WithDefaults()
	l := &Limiter{maxInFlight: c.MaxUnauthenticated, maxTracked: max(c.MaxTracked, 1), now: now,
		entries: map[netip.Prefix]*list.Element{}, bodies: bodies, maxBody: c.MaxBodyBytes}
	if c.FailedAuthPerMinute > 0 && c.FailedAuthBurst > 0 {
		l.rate, l.burst = float64(c.FailedAuthPerMinute)/60, float64(c.FailedAuthBurst)
	}
	return l
}

// Slot is a request's hold on its client's unauthenticated in-flight share; the zero Slot holds
// nothing. Release gives it back (once; later calls do nothing).
type Slot struct {
	l *Limiter
	e *entry
}

// Enter takes one of key's unauthenticated slots; false when key holds all of them.
func (l *Limiter) Enter(key netip.Prefix) (Slot, bool) {
	if l == nil || l.maxInFlight < 0 {
		return Slot{}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.touch(key)
	if e.inFlight >= l.maxInFlight {
		return Slot{}, false
	}
	e.inFlight++
	return Slot{l: l, e: e}, true
}

// Bodies is the budget the request's body is read against: its client's share of the
// replica's, or nil when there is no share (the replica's then).
func (s *Slot) Bodies() *bodyread.Budget {
	if s.e == nil {
		return nil
	}
	return s.e.bodies
}

// Bodies is the replica's budget for request bodies the limiter shares out, for a server that
// carries the limiter on (after a reload) to read against.
func (l *Limiter) Bodies() *bodyread.Budget { return l.bodies }

// Release gives the slot back.
func (s *Slot) Release() {
	if s.e == nil {
		return
	}
	s.l.mu.Lock()
	s.e.inFlight--
	s.l.mu.Unlock()
	s.e = nil
}

// MayVerify reports whether key may have a token verified that is not known already: false,
// with the time until it may, while its failed authentications are over their rate.
func (l *Limiter) MayVerify(key netip.Prefix) (bool, time.Duration) {
	if l == nil || l.rate == 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.entries[key]
	if !ok {
		return true, 0
	}
	e := el.Value.(*entry)
	l.refill(e)
	if e.tokens >= 1 {
		return true, 0
	}
	wait := time.Duration(math.Ceil((1 - e.tokens) / l.rate * float64(time.Second)))
	return false, wait
}

// Failed counts one failed authentication of key against its rate.
func (l *Limiter) Failed(key netip.Prefix) {
	if l == nil || l.rate == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.touch(key)
	l.refill(e)
	e.tokens = max(e.tokens-1, 0)
}

// Tracked is the number of client address groups the limiter holds state for.
func (l *Limiter) Tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// touch returns key's entry, made the most recent, creating it (and forgetting the least
// recent one when MaxTracked are held) if needed. Forgetting a group with requests in flight
// only loses its count: their Slots release into the forgotten entry.
func (l *Limiter) touch(key netip.Prefix) *entry {
	if el, ok := l.entries[key]; ok {
		l.lru.MoveToFront(el)
		return el.Value.(*entry)
	}
	if len(l.entries) >= l.maxTracked {
		old := l.lru.Back()
		l.lru.Remove(old)
		delete(l.entries, old.Value.(*entry).key)
	}
	e := &entry{key: key, tokens: l.burst, at: l.now()}
	if l.maxBody > 0 && l.bodies != nil {
		e.bodies = bodyread.NewShare(l.bodies, l.maxBody)
	}
	l.entries[key] = l.lru.PushFront(e)
	return e
}

// refill brings e's tokens up to now.
func (l *Limiter) refill(e *entry) {
	now := l.now()
	if d := now.Sub(e.at); d > 0 {
		e.tokens = min(e.tokens+d.Seconds()*l.rate, l.burst)
	}
	e.at = now
}
