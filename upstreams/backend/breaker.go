package backend

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/legacy"
)

// Defaults of BreakerConfig.
const (
	// DefaultBreakerFailures is how many consecutive failed requests open a backend's circuit.
	DefaultBreakerFailures = 5
	// DefaultBreakerCooldown is how long an open circuit fails fast before it lets one trial
	// request through (half-open).
	DefaultBreakerCooldown = 30 * time.Second
	// DefaultBreakerMinCallers is how many distinct callers' failures it takes to open the
	// circuit for everyone; failures that no caller could have caused open it alone.
	DefaultBreakerMinCallers = 2
	// DefaultBreakerTrackedCallers bounds the callers whose own failure streak one replica
	// remembers per backend.
	DefaultBreakerTrackedCallers = 1024
	// MaxBreakerTrackedCallers bounds BreakerConfig.TrackedCallers.
	MaxBreakerTrackedCallers = 1 << 20
	// MaxBreakerMinCallers bounds BreakerConfig.MinCallers (and so the callers a breaker's
	// shared streak lists).
	MaxBreakerMinCallers = 100
)

// Circuit states passed to Env.CircuitState; the numbers are stable so a gauge can show
// them.
const (
	// CircuitClosed: calls flow normally.
	CircuitClosed = 0
	// CircuitOpen: calls fail fast with ErrCircuitOpen until the cooldown passes.
	CircuitOpen = 1
	// CircuitHalfOpen: one trial request is in flight; its outcome closes or re-opens the
	// circuit, and other calls fail fast meanwhile.
	CircuitHalfOpen = 2
)

// ErrCircuitOpen: the backend's circuit is open, so the call was not sent. It always comes
// wrapped together with wire.ErrUnavailable, so callers that map it need nothing more.
var ErrCircuitOpen = errors.New("upstreams: circuit open")

// ErrCallTimeout is the cancellation cause to give a context whose deadline is a request's own
// timeout, set by the caller of Post or RoundTrip in place of the backend's (an interceptor's
// invocation): its expiry is then a timeout of the backend's (wire.ErrTimeout), which the
// breaker counts, not the caller going away, which it does not.
var ErrCallTimeout = wire.ErrCallTimeout

// ErrCallerCircuitOpen: the caller's own recent requests to the backend failed
// BreakerConfig.Failures times in a row, so this one was not sent; other callers' requests
// still are. It wraps ErrCircuitOpen (nothing retries it, nothing counts it as the backend's
// failure), and a policy that lets a call through when a check cannot be made must not let it
// through for this: the caller made the check fail itself.
var ErrCallerCircuitOpen = fmt.Errorf("%w for this caller", ErrCircuitOpen)

// BreakerConfig tunes one backend's circuit breaker.
type BreakerConfig struct {
	// Failures is the number of consecutive failed requests (unreachable, reset, 502/503/504,
	// timeout; never a 429, which is an answer) that opens the circuit, for everyone when they
	// come from MinCallers callers or from no caller, else for the one caller whose requests
	// failed. Zero means DefaultBreakerFailures.
	Failures int `yaml:"failures"`
	// Cooldown is how long an open circuit fails fast before a half-open trial. Zero means
	// DefaultBreakerCooldown.
	Cooldown time.Duration `yaml:"cooldown"`
	// MinCallers is how many distinct authenticated callers (issuer and subject) the
	// consecutive failures must come from to open the circuit for everyone;
	// one caller adds at most Failures/MinCallers (rounded up) of them. Failures no caller
	// could have caused (the connection or TLS handshake failed before anything was sent, the
	// gateway's own health and era probes, and every failure without authentication, where
	// nothing tells callers apart) count whoever is calling. Zero means
	// DefaultBreakerMinCallers; 1 lets any one caller open the circuit for everyone; at most
	// MaxBreakerMinCallers (100).
	MinCallers int `yaml:"minCallers"`
	// TrackedCallers bounds the callers whose own failure streak one replica remembers for
	// this backend (the least recently failed is forgotten first). Zero means
	// DefaultBreakerTrackedCallers; at most MaxBreakerTrackedCallers (1048576).
	TrackedCallers int `yaml:"trackedCallers"`
	// Disabled turns the breaker off: every call is sent whatever the backend's recent record.
	Disabled bool `yaml:"disabled"`
}

func (c *BreakerConfig) validate() []error {
	var errs []error
	if c.Failures < 0 {
		errs = append(errs, configerr.At("failures", "must not be negative"))
	}
	if c.Cooldown < 0 {
		errs = append(errs, configerr.At("cooldown", "must not be negative"))
	}
	if c.MinCallers < 0 || c.MinCallers > MaxBreakerMinCallers {
		errs = append(errs, configerr.At("minCallers", "%d: want 0 (the default, %d) up to %d", c.MinCallers, DefaultBreakerMinCallers, MaxBreakerMinCallers))
	}
	if c.TrackedCallers < 0 || c.TrackedCallers > MaxBreakerTrackedCallers {
		errs = append(errs, configerr.At("trackedCallers", "%d: want 0 (the default, %d) up to %d", c.TrackedCallers, DefaultBreakerTrackedCallers, MaxBreakerTrackedCallers))
	}
	return errs
}

// Who a request's failure is charged to (Request.charge): an authenticated caller's key
// (authz.Principal.CallerKey, never its token: a caller has one subject however many tokens it
// gets), or one of these.
const (
	// chargeNone: a request no one caller is answerable for (the health probe, the era probe,
	// the gateway's own discover and initialize, any request without authentication): its
	// failure counts for the shared circuit, whoever is calling.
	chargeNone = ""
	// chargeShared: a request made for several callers at once (a shared listen stream): only a
	// failure before anything was sent counts, since any of them may have caused the rest.
	chargeShared = "\x00shared"
)

// Events passed to Env.CallerCircuit.
const (
	// CallerOpened: one caller's own failures opened its circuit (only its requests fail fast).
	CallerOpened = "opened"
	// CallerRefused: a request was refused, unsent, by its caller's own open circuit.
	CallerRefused = "refused"
	// CallerEvicted: a caller's failure record was forgotten to keep the replica's bound
	// (BreakerConfig.TrackedCallers).
	CallerEvicted = "evicted"
)

// breaker is a consecutive-failure circuit breaker that no one caller can open for the others.
// A nil *breaker allows everything.
//
// A failure is charged to whoever could have caused it. One the backend answers for whoever
// asked (nothing could be sent: the connection or TLS handshake failed; or the request was the
// gateway's own) counts towards the shared circuit at once. One charged to a caller (its
// arguments may be what makes the backend hang or fail) adds at most that caller's share
// (threshold/minCallers, rounded up) to the shared streak, and the circuit opens for everyone
// only once minCallers distinct callers are among the failures. The caller's own streak, kept in
// a bounded LRU record (callers.go), makes that caller alone fail fast after threshold failures,
// and lets one trial of its through per cooldown, as the shared circuit does.
//
// Health probes bypass an open circuit and feed it: a successful probe closes the circuit
// without spending a client's request on the trial, a failed one restarts the cooldown. The era
// probe a client's request starts (protocol: auto) is governed like the request itself. Once
// open, the circuit re-opens (or stays open) on a failure charged to no caller, or on failures
// of minCallers distinct callers since it opened; a caller's failed trial is charged to that
// caller and frees the trial for the next request.
type breaker struct {
	name       string
	threshold  int
	cooldown   time.Duration
	minCallers int
	share      int // the most failures one caller adds to the shared streak
	onChange   func(upstream string, state int)

	mu       sync.Mutex
	state    int
	streak   streak // the shared circuit's failures since it last closed or opened
	openedAt time.Time
	trial    bool // a half-open trial is in flight
	callers  callerRecords
}

func newBreaker(name string, c BreakerConfig, onChange func(string, int), onCaller func(string, string)) *breaker {
	if c.Disabled {
		return nil
	}
	b := &breaker{
		name:       name,
		threshold:  orInt(c.Failures, DefaultBreakerFailures),
		cooldown:   orDuration(c.Cooldown, DefaultBreakerCooldown),
		minCallers: orInt(c.MinCallers, DefaultBreakerMinCallers),
		onChange:   onChange,
	}
	b.share = (b.threshold + b.minCallers - 1) / b.minCallers
	b.callers = newCallerRecords(orInt(c.TrackedCallers, DefaultBreakerTrackedCallers), func(event string) {
		if onCaller != nil {
			onCaller(name, event)
		}
	})
	if onChange != nil {
		onChange(name, CircuitClosed)
	}
	return b
}

// redirect makes b report its state changes to onChange from now on: a reloaded
// configuration's backend that takes b over (ShareCircuit) reports them to its own gauge, not
// to the replaced configuration's.
func (b *breaker) redirect(onChange func(string, int)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.onChange = onChange
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// allow decides whether a request charged to charge may be sent now. A probe is always sent.
func (b *breaker) allow(now time.Time, probe bool, charge string) error {
	if b == nil || probe {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	refused, callerTrial := b.callers.refuses(charge, now, b.cooldown)
	if refused {
		return fmt.Errorf("%w: %w: %s", wire.ErrUnavailable, ErrCallerCircuitOpen, b.name)
	}
	switch b.state {
	case CircuitOpen:
		if now.Sub(b.openedAt) < b.cooldown {
			return b.openErr()
		}
		b.setState(CircuitHalfOpen)
		b.trial = true
	case CircuitHalfOpen:
		if b.trial {
			return b.openErr()
		}
		b.trial = true
	}
	if callerTrial {
		b.callers.beginTrial(charge, now) // only once the request is let through
	}
	return nil
}

// isOpen reports, without changing anything, whether allow would refuse a request now: the
// circuit is open within its cooldown, or half-open with its trial in flight. The era probe
// checks it before joining a probe another request started.
func (b *breaker) isOpen(now time.Time) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case CircuitOpen:
		return now.Sub(b.openedAt) < b.cooldown
	case CircuitHalfOpen:
		return b.trial
	}
	return false
}

func (b *breaker) openErr() error {
	return fmt.Errorf("%w: %w: %s", wire.ErrUnavailable, ErrCircuitOpen, b.name)
}

// result records the outcome of a request that allow let through, charged to charge.
func (b *breaker) result(now time.Time, charge, outcome string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch outcome {
	case OutcomeOK, OutcomeBackendError, OutcomeRateLimited:
		// A JSON-RPC error is an answer, and so is a 429: the backend is reachable.
		b.trial = false
		b.streak.reset()
		b.callers.forget(charge)
		b.setState(CircuitClosed)
	case OutcomeUnavailable, OutcomeTimeout:
		b.trial = false
		b.streak.add(charge, b.share)
		if charge != chargeNone {
			b.callers.failed(charge, now, b.threshold, b.cooldown)
		}
		// Only failures that are everyone's business open it; a closed circuit waits for
		// threshold of them, an open or half-open one re-opens on the first.
		if b.streak.wide(b.minCallers) && (b.state != CircuitClosed || b.streak.counted >= b.threshold) {
			b.openedAt = now
			b.streak.reset()
			b.setState(CircuitOpen)
		}
	default:
		// Canceled by the caller or a malformed answer says nothing about reachability; a
		// cancelled trial frees the half-open slot for the next request.
		b.trial = false
	}
}

// setState changes the state and reports a change. The hook runs under the lock so that
// reports arrive in the order of the transitions; it must not block.
func (b *breaker) setState(s int) {
	if b.state == s {
		return
	}
	b.state = s
	if b.onChange != nil {
		b.onChange(b.name, s)
	}
}

func (b *breaker) current() int {
	if b == nil {
		return CircuitClosed
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// observe feeds the outcome of a request charged to charge to the breaker and reports whether
// the backend's health should see it too: a call refused by an open circuit, failed for want of
// credentials, held back for a 429's wait, or given up while the era probe was still running says nothing about the
// backend itself. A failure before anything was sent is charged to no caller: none could have
// caused it.
func (b *breaker) observe(now time.Time, charge, outcome string, err error) bool {
	switch {
	case err == nil: // the common case, without the allocation of errors.As's target below
	case errors.Is(err, ErrCircuitOpen), errors.Is(err, errEraPending), errors.As(err, new(probeErr)),
		errors.Is(err, legacy.ErrSessionsFull):
		return false
	case errors.Is(err, ErrCredentials), errors.Is(err, ErrRateLimitWait):
		// Not sent (no credentials; or held back for a 429's wait, which a session's request
		// may meet after the circuit let it through): frees a half-open slot it may hold.
		b.result(now, charge, OutcomeCanceled)
		return false
	case wire.NotSent(err):
		charge = chargeNone
	case charge == chargeShared:
		outcome = OutcomeCanceled // frees a half-open slot; counted by no one
	}
	b.result(now, charge, outcome)
	return true
}
