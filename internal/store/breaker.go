package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// Defaults for the Redis circuit breaker (RedisConfig.Breaker).
const (
	// DefaultBreakerFailures is how many consecutive failed Redis commands open the breaker.
	DefaultBreakerFailures = 3
	// DefaultBreakerCooldown is how long an open breaker skips Redis before one probe.
	DefaultBreakerCooldown = 2 * time.Second
	// MaxBreakerCooldown bounds RedisBreaker.Cooldown.
	MaxBreakerCooldown = 5 * time.Minute
)

// ErrSkipped means the Redis store did not send the command because its circuit breaker is
// open: recent commands failed, and the store answers at once rather than have every request
// wait out the timeouts. It always comes wrapped together with ErrUnavailable, so callers
// apply their usual fail-open or fail-closed rule.
var ErrSkipped = errors.New("store: redis skipped while its circuit breaker is open")

// BreakerState is the state of the Redis store's circuit breaker.
type BreakerState int

// Breaker states; the values are those of the mcp_gateway_redis_circuit_state gauge.
const (
	// BreakerClosed sends every command to Redis.
	BreakerClosed BreakerState = iota
	// BreakerHalfOpen lets one probe command through after the cooldown; the others are
	// skipped until it answers.
	BreakerHalfOpen
	// BreakerOpen skips every command until the cooldown has passed.
	BreakerOpen
)

// String names the state for logs.
func (s BreakerState) String() string {
	switch s {
	case BreakerHalfOpen:
		return "half-open"
	case BreakerOpen:
		return "open"
	}
	return "closed"
}

// RedisBreaker configures the circuit breaker in front of Redis. A Redis that hangs (paused,
// overloaded, a network partition that drops packets) makes each command wait for the read
// timeout and a retry; without the breaker every request that touches Redis would wait that
// long, and rate limiting that "fails open" would still stall every call. After Failures
// consecutive failures the store skips Redis for Cooldown and fails at once with ErrSkipped;
// then one command probes Redis, and its success closes the breaker again. Skipped commands
// are never treated as successes: single-use checks still fail closed.
type RedisBreaker struct {
	// Failures is how many consecutive failed commands open the breaker; 0 means
	// DefaultBreakerFailures and -1 turns the breaker off. Only failures to get an answer
	// count (timeouts, refused or broken connections), not Redis error replies.
	Failures int `yaml:"failures"`
	// Cooldown is how long the breaker stays open before a probe; 0 means
	// DefaultBreakerCooldown, at most MaxBreakerCooldown.
	Cooldown time.Duration `yaml:"cooldown"`
}

func (b RedisBreaker) validate() []error {
	var errs []error
	if b.Failures < -1 {
		errs = append(errs, configerr.At("failures", "%d: want -1 (off), 0 (the default, %d) or more", b.Failures, DefaultBreakerFailures))
	}
	if b.Cooldown < 0 || b.Cooldown > MaxBreakerCooldown {
		errs = append(errs, configerr.At("cooldown", "%v: want 0s (the default, %v) to %v", b.Cooldown, DefaultBreakerCooldown, MaxBreakerCooldown))
	}
	return errs
}

// breaker is a consecutive-failure circuit breaker with a single half-open probe. The zero
// threshold (Failures: -1) disables it.
type breaker struct {
	threshold int
	cooldown  time.Duration
	now       func() time.Time
	onChange  func(BreakerState)
	skipped   atomic.Uint64

	mu       sync.Mutex
	state    BreakerState
	failures int
	openedAt time.Time
}

func newBreaker(cfg RedisBreaker, now func() time.Time, onChange func(BreakerState)) *breaker {
	threshold := orDefault(cfg.Failures, DefaultBreakerFailures)
	if threshold < 0 {
		threshold = 0
	}
	if now == nil {
		now = time.Now
	}
	return &breaker{threshold: threshold, cooldown: orDefault(cfg.Cooldown, DefaultBreakerCooldown),
		now: now, onChange: onChange}
}

// admit reports whether a command may go to Redis, and whether it is the half-open probe.
func (b *breaker) admit() (ok, probe bool) {
	if b.threshold == 0 {
		return true, false
	}
	b.mu.Lock()
	switch {
	case b.state == BreakerClosed:
		b.mu.Unlock()
		return true, false
	case b.state == BreakerOpen && b.now().Sub(b.openedAt) >= b.cooldown:
		b.set(BreakerHalfOpen)
		b.mu.Unlock()
		return true, true
	}
	b.mu.Unlock()
	b.skipped.Add(1)
	return false, false
}

// outcome classifies what a command's error says about Redis's health.
type outcome int

const (
	outcomeOK      outcome = iota // Redis answered (a reply, even an error reply)
	outcomeFailed                 // no answer: timeout, refused, broken connection
	outcomeNeutral                // the caller gave up first; says nothing about Redis
)

func classify(err error) outcome {
	var reply redis.Error
	switch {
	case err == nil, errors.As(err, &reply):
		return outcomeOK
	case errors.Is(err, context.Canceled):
		return outcomeNeutral
	}
	return outcomeFailed
}

// done records the outcome of a command admitted by admit.
func (b *breaker) done(probe bool, o outcome) {
	if b.threshold == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch o {
	case outcomeOK:
		b.failures = 0
		if b.state != BreakerClosed {
			b.set(BreakerClosed)
		}
	case outcomeFailed:
		b.failures++
		if probe || (b.state == BreakerClosed && b.failures >= b.threshold) {
			b.openedAt = b.now()
			b.set(BreakerOpen)
		}
	case outcomeNeutral:
		if probe && b.state == BreakerHalfOpen {
			// The probe told nothing; let the next command probe at once.
			b.set(BreakerOpen)
		}
	}
}

// set changes the state and reports the change; the caller holds b.mu.
func (b *breaker) set(s BreakerState) {
	if b.state == s {
		return
	}
	b.state = s
	if b.onChange != nil {
		b.onChange(s)
	}
}

func (b *breaker) current() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}
