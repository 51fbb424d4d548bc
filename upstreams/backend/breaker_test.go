package backend

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

func TestBreakerTransitions(t *testing.T) {
	clock := newTestClock()
	var states []int // the breaker reports on the calling goroutine, this one
	b := newBreaker("x", BreakerConfig{Failures: 2, Cooldown: time.Minute}, func(_ string, s int) { states = append(states, s) }, nil)
	mustAllow := func(probe bool) {
		t.Helper()
		if err := b.allow(clock.Now(), probe, chargeNone); err != nil {
			t.Fatalf("allow (probe %v) in state %d: %v", probe, b.current(), err)
		}
	}
	mustRefuse := func() {
		t.Helper()
		err := b.allow(clock.Now(), false, chargeNone)
		if !errors.Is(err, ErrCircuitOpen) || !errors.Is(err, wire.ErrUnavailable) {
			t.Fatalf("allow in state %d = %v, want ErrCircuitOpen and wire.ErrUnavailable", b.current(), err)
		}
	}
	// One failure, then a JSON-RPC error (an answer) and a bad response (not a reachability
	// signal): none of them opens the circuit.
	for _, o := range []string{OutcomeTimeout, OutcomeBackendError, OutcomeTimeout, OutcomeBadResponse} {
		mustAllow(false)
		b.result(clock.Now(), chargeNone, o)
	}
	mustAllow(false)
	b.result(clock.Now(), chargeNone, OutcomeUnavailable) // the second consecutive failure opens it
	mustRefuse()
	mustAllow(true) // a health probe passes an open circuit
	clock.Advance(time.Minute - time.Second)
	mustRefuse()
	clock.Advance(time.Second)
	mustAllow(false) // the half-open trial
	mustRefuse()     // only one trial at a time
	b.result(clock.Now(), chargeNone, OutcomeCanceled)
	mustAllow(false) // a cancelled trial frees the slot
	b.result(clock.Now(), chargeNone, OutcomeUnavailable)
	mustRefuse() // the failed trial re-opened it for another cooldown
	clock.Advance(time.Minute)
	mustAllow(false)
	b.result(clock.Now(), chargeNone, OutcomeOK)
	mustAllow(false)
	mustAllow(false)
	want := []int{CircuitClosed, CircuitOpen, CircuitHalfOpen, CircuitOpen, CircuitHalfOpen, CircuitClosed}
	if got := states; !slices.Equal(got, want) {
		t.Fatalf("reported states %v, want %v", got, want)
	}
}

func TestBreakerProbeCloses(t *testing.T) {
	clock := newTestClock()
	b := newBreaker("x", BreakerConfig{Failures: 1}, nil, nil)
	b.result(clock.Now(), chargeNone, OutcomeUnavailable)
	if b.current() != CircuitOpen {
		t.Fatalf("state %d, want open", b.current())
	}
	if err := b.allow(clock.Now(), true, chargeNone); err != nil {
		t.Fatal(err)
	}
	b.result(clock.Now(), chargeNone, OutcomeOK)
	if b.current() != CircuitClosed {
		t.Fatalf("state %d after a successful probe, want closed", b.current())
	}
}

func TestBreakerDisabled(t *testing.T) {
	b := newBreaker("x", BreakerConfig{Disabled: true, Failures: 1}, nil, nil)
	for range 5 {
		b.result(time.Time{}, chargeNone, OutcomeUnavailable)
		if err := b.allow(time.Time{}, false, chargeNone); err != nil {
			t.Fatalf("a disabled breaker refused: %v", err)
		}
	}
}
