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

// BreakerConfig tunes one backend's circuit breaker.
type BreakerConfig struct {
	// Failures is the number of consecutive failed requests (unreachable, reset, 502/503/504,
	// timeout) that opens the circuit. Zero means DefaultBreakerFailures.
	Failures int `yaml:"failures"`
	// Cooldown is how long an open circuit fails fast before a half-open trial. Zero means
	// DefaultBreakerCooldown.
	Cooldown time.Duration `yaml:"cooldown"`
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
	return errs
}

// breaker is a consecutive-failure circuit breaker. A nil *breaker allows everything.
//
// Health probes bypass an open circuit and feed it: a successful probe closes the circuit
// without spending a client's request on the trial, a failed one restarts the cooldown. The era
// probe a client's request starts (protocol: auto) is governed like the request itself.
type breaker struct {
	name      string
	threshold int
	cooldown  time.Duration
	onChange  func(upstream string, state int)

	mu       sync.Mutex
	state    int
	failures int
	openedAt time.Time
	trial    bool // a half-open trial is in flight
}

func newBreaker(name string, c BreakerConfig, onChange func(string, int)) *breaker {
	if c.Disabled {
		return nil
	}
	b := &breaker{
		name:      name,
		threshold: c.Failures,
		cooldown:  orDuration(c.Cooldown, DefaultBreakerCooldown),
		onChange:  onChange,
	}
	if b.threshold == 0 {
		b.threshold = DefaultBreakerFailures
	}
	if onChange != nil {
		onChange(name, CircuitClosed)
	}
	return b
}

// allow decides whether a request may be sent now. A probe is always sent.
func (b *breaker) allow(now time.Time, probe bool) error {
	if b == nil || probe {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
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

// result records the outcome of a request that allow let through.
func (b *breaker) result(now time.Time, outcome string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch outcome {
	case OutcomeOK, OutcomeBackendError:
		// A JSON-RPC error is an answer: the backend is reachable.
		b.failures, b.trial = 0, false
		b.setState(CircuitClosed)
	case OutcomeUnavailable, OutcomeTimeout:
		b.failures++
		b.trial = false
		if b.state != CircuitClosed || b.failures >= b.threshold {
			b.openedAt = now
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

// observe feeds the outcome of a request to the breaker and reports whether the backend's
// health should see it too: a call refused by the open circuit, failed for want of
// credentials, or given up while the era probe was still running says nothing about the
// backend itself.
func (b *breaker) observe(now time.Time, outcome string, err error) bool {
	switch {
	case err == nil: // the common case, without the allocation of errors.As's target below
	case errors.Is(err, ErrCircuitOpen), errors.Is(err, errEraPending), errors.As(err, new(probeErr)),
		errors.Is(err, legacy.ErrSessionsFull):
		return false
	case errors.Is(err, ErrCredentials):
		b.result(now, OutcomeCanceled) // frees a half-open slot this request may hold
		return false
	}
	b.result(now, outcome)
	return true
}
