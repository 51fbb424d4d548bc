package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
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

// TestBreakerChargesCallers: one caller's failures open its own circuit only, however many;
// the shared circuit opens on failures of MinCallers callers (each adding at most its share) or
// on failures no caller caused, and a caller's failed trial does not re-open it.
func TestBreakerChargesCallers(t *testing.T) {
	clock := newTestClock()
	var events []string
	b := newBreaker("x", BreakerConfig{Failures: 4, Cooldown: time.Minute}, nil, func(_, e string) { events = append(events, e) })
	fail := func(charge string) {
		t.Helper()
		if err := b.allow(clock.Now(), false, charge); err != nil {
			t.Fatalf("allow %q: %v", charge, err)
		}
		b.result(clock.Now(), charge, OutcomeTimeout)
	}
	for range 10 {
		if err := b.allow(clock.Now(), false, "iss#alice"); err != nil {
			if !errors.Is(err, ErrCallerCircuitOpen) || !errors.Is(err, ErrCircuitOpen) || !errors.Is(err, wire.ErrUnavailable) {
				t.Fatalf("alice refused with %v", err)
			}
			continue
		}
		b.result(clock.Now(), "iss#alice", OutcomeTimeout)
	}
	if b.current() != CircuitClosed || b.allow(clock.Now(), false, "iss#bob") != nil {
		t.Fatalf("one caller's failures: state %d", b.current())
	}
	if !slices.Equal(events, []string{CallerOpened, CallerRefused, CallerRefused, CallerRefused, CallerRefused, CallerRefused, CallerRefused}) {
		t.Fatalf("events %v", events)
	}
	b.result(clock.Now(), "iss#bob", OutcomeOK) // bob's success resets the shared streak, not alice's record
	if err := b.allow(clock.Now(), false, "iss#alice"); !errors.Is(err, ErrCallerCircuitOpen) {
		t.Fatalf("alice after bob's success: %v", err)
	}
	// After her cooldown alice's trial fails, and her circuit opens again at once. Her failure
	// and bob's (at most his share, 2 of 4 over 2 callers) are three; carol's makes four from
	// three callers, which opens the shared circuit.
	clock.Advance(time.Minute)
	fail("iss#alice")
	if err := b.allow(clock.Now(), false, "iss#alice"); !errors.Is(err, ErrCallerCircuitOpen) {
		t.Fatalf("alice after her failed trial: %v", err)
	}
	for range 3 {
		fail("iss#bob")
	}
	if b.current() != CircuitClosed {
		t.Fatal("opened with three counted failures")
	}
	fail("iss#carol")
	if b.current() != CircuitOpen {
		t.Fatalf("state %d after failures of three callers", b.current())
	}
	// Half-open: a caller's failed trial frees the trial; only a failure no caller caused (or two
	// callers') re-opens it.
	clock.Advance(time.Minute)
	fail("iss#carol")
	if b.current() != CircuitHalfOpen {
		t.Fatalf("state %d after one caller's failed trial", b.current())
	}
	fail(chargeNone)
	if b.current() != CircuitOpen {
		t.Fatalf("state %d after a failure no caller caused", b.current())
	}
	clock.Advance(time.Minute)
	if err := b.allow(clock.Now(), false, "iss#dave"); err != nil {
		t.Fatal(err)
	}
	b.result(clock.Now(), "iss#dave", OutcomeOK)
	if b.current() != CircuitClosed {
		t.Fatalf("state %d after a successful trial", b.current())
	}
	// Failures no caller caused open it alone, as before.
	for range 4 {
		fail(chargeNone)
	}
	if b.current() != CircuitOpen {
		t.Fatalf("state %d after four failures no caller caused", b.current())
	}
}

// TestBreakerMinCallersOne: minCallers 1 lets one caller open the circuit for everyone.
func TestBreakerMinCallersOne(t *testing.T) {
	b := newBreaker("x", BreakerConfig{Failures: 2, MinCallers: 1}, nil, nil)
	b.result(time.Time{}, "iss#alice", OutcomeUnavailable)
	b.result(time.Time{}, "iss#alice", OutcomeUnavailable)
	if err := b.allow(time.Time{}, false, "iss#bob"); !errors.Is(err, ErrCircuitOpen) || errors.Is(err, ErrCallerCircuitOpen) {
		t.Fatalf("bob: %v", err)
	}
}

// TestBreakerCallerRecordsBounded: the per-caller records keep at most TrackedCallers callers,
// forgetting the least recently failed, and a caller's success forgets its own.
func TestBreakerCallerRecordsBounded(t *testing.T) {
	var evicted int
	b := newBreaker("x", BreakerConfig{Failures: 1, MinCallers: 100, TrackedCallers: 3}, nil, func(_, e string) {
		if e == CallerEvicted {
			evicted++
		}
	})
	now := newTestClock().Now()
	for i := range 10 {
		b.result(now, fmt.Sprintf("iss#c%d", i), OutcomeTimeout)
	}
	if n := len(b.callers.byKey); n != 3 || b.callers.order.Len() != 3 || evicted != 7 {
		t.Fatalf("%d records (%d in order), %d evicted; want 3 and 7", n, b.callers.order.Len(), evicted)
	}
	if b.allow(now, false, "iss#c0") != nil || b.allow(now, false, "iss#c9") == nil {
		t.Fatal("the oldest caller is still refused, or the newest is not")
	}
	b.result(now, "iss#c9", OutcomeOK)
	if _, ok := b.callers.byKey["iss#c9"]; ok || b.allow(now, false, "iss#c9") != nil {
		t.Fatal("a success did not forget the caller's record")
	}
}

// TestBreakerSharedRequests: a request made for several callers at once (a shared listen
// stream) counts for the circuit only when nothing was sent; a request of a caller whose
// connection could not be made counts as nobody's, and opens the shared circuit alone.
func TestBreakerSharedRequests(t *testing.T) {
	ctx := context.Background()
	answered := wire.StatusError("x", 503, "overloaded")
	refused := wire.Classify(ctx, "x", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")})
	if !wire.NotSent(refused) || wire.NotSent(answered) {
		t.Fatalf("NotSent: refused %v, answered %v", wire.NotSent(refused), wire.NotSent(answered))
	}
	b := newBreaker("x", BreakerConfig{Failures: 2, Cooldown: time.Minute}, nil, nil)
	now := newTestClock().Now()
	shared := &Request{Shared: true, Caller: "iss#alice", FromCaller: true}
	for range 5 {
		b.observe(now, shared.charge(), OutcomeUnavailable, answered)
	}
	if b.current() != CircuitClosed {
		t.Fatal("a shared stream's answered failures opened the circuit")
	}
	alice := &Request{Caller: "iss#alice", FromCaller: true}
	b.observe(now, alice.charge(), OutcomeUnavailable, refused)
	b.observe(now, shared.charge(), OutcomeUnavailable, refused)
	if b.current() != CircuitOpen {
		t.Fatalf("state %d after two refused connections, want open", b.current())
	}
	if _, ok := b.callers.byKey["iss#alice"]; ok {
		t.Fatal("a refused connection was charged to the caller")
	}
}

// TestBreakerConfigBounds: minCallers and trackedCallers out of their ranges are reported, each
// at its key.
func TestBreakerConfigBounds(t *testing.T) {
	for _, c := range []struct {
		cfg  BreakerConfig
		keys []string
	}{
		{BreakerConfig{MinCallers: -1, TrackedCallers: -1}, []string{"minCallers", "trackedCallers"}},
		{BreakerConfig{MinCallers: MaxBreakerMinCallers + 1, TrackedCallers: MaxBreakerTrackedCallers + 1}, []string{"minCallers", "trackedCallers"}},
		{BreakerConfig{MinCallers: MaxBreakerMinCallers, TrackedCallers: MaxBreakerTrackedCallers}, nil},
	} {
		errs := c.cfg.validate()
		if len(errs) != len(c.keys) {
			t.Fatalf("%+v: %v, want problems at %v", c.cfg, errs, c.keys)
		}
		for i, err := range errs {
			if !strings.HasPrefix(err.Error(), c.keys[i]) {
				t.Errorf("%+v: problem %q, want it at %s", c.cfg, err, c.keys[i])
			}
		}
	}
}

// TestBreakerCallerTrialIsOne: once a caller's own cooldown has passed, one request of that
// caller is its trial; the others it sends meanwhile are refused, as the shared circuit lets one
// trial through, not all of them: a caller whose requests hang the backend sends one per
// cooldown, not as many as it has in flight. The trial's failure re-opens the caller's circuit,
// its success closes it, and a trial whose outcome never comes ties nothing up past a cooldown.
func TestBreakerCallerTrialIsOne(t *testing.T) {
	clock := newTestClock()
	b := newBreaker("x", BreakerConfig{Failures: 2, Cooldown: time.Minute, MinCallers: 100}, nil, nil)
	for range 2 {
		b.result(clock.Now(), "iss#alice", OutcomeTimeout)
	}
	refused := func(when string) {
		t.Helper()
		if err := b.allow(clock.Now(), false, "iss#alice"); !errors.Is(err, ErrCallerCircuitOpen) {
			t.Fatalf("%s: alice's request = %v, want ErrCallerCircuitOpen", when, err)
		}
	}
	allowed := func(when string) {
		t.Helper()
		if err := b.allow(clock.Now(), false, "iss#alice"); err != nil {
			t.Fatalf("%s: alice's request = %v, want it sent", when, err)
		}
	}
	refused("within the cooldown")
	for _, end := range []string{OutcomeTimeout, OutcomeUnavailable} {
		clock.Advance(time.Minute)
		allowed("the trial after the cooldown")
		for range 5 {
			refused("while her trial is in flight")
		}
		if err := b.allow(clock.Now(), false, "iss#bob"); err != nil {
			t.Fatalf("bob while alice's trial is in flight: %v", err)
		}
		b.result(clock.Now(), "iss#alice", end)
		refused("after her failed trial")
	}
	// A trial whose outcome never comes: another one a cooldown later.
	clock.Advance(time.Minute)
	allowed("the trial after the cooldown")
	clock.Advance(time.Minute - time.Second)
	refused("while her lost trial may still be in flight")
	clock.Advance(time.Second)
	allowed("a cooldown after the lost trial")
	b.result(clock.Now(), "iss#alice", OutcomeOK)
	for range 3 {
		allowed("after her successful trial")
	}
}

// TestShareCircuit: a reloaded configuration's backend carries on with the breaker of the one it
// replaces, open circuit and all, only when it reaches the same backend the same way with the
// same breaker settings; from then on the state changes are reported through its own hook.
func TestShareCircuit(t *testing.T) {
	var prevReports, reports []int
	newB := func(cfg Config, hook *[]int) *Backend {
		t.Helper()
		env := &Env{Now: time.Now, CircuitState: func(_ string, s int) { *hook = append(*hook, s) }}
		b, err := New(cfg, env)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		return b
	}
	base := Config{Name: "alpha", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"X-Team": "a"}, Breaker: BreakerConfig{Failures: 1, Cooldown: time.Hour}}
	prev := newB(base, &prevReports)
	prev.breaker.result(time.Now(), chargeNone, OutcomeUnavailable)
	if prev.CircuitState() != CircuitOpen {
		t.Fatal("prev's circuit did not open")
	}
	changed := base
	changed.Headers = map[string]string{"X-Team": "b"}
	otherBreaker := base
	otherBreaker.Breaker.Failures = 2
	for name, cfg := range map[string]Config{"headers": changed, "breaker settings": otherBreaker} {
		var none []int
		if b := newB(cfg, &none); ShareCircuit(b, prev) || b.CircuitState() != CircuitClosed {
			t.Errorf("changed %s: the breaker was shared (state %d)", name, b.CircuitState())
		}
	}
	b := newB(base, &reports)
	if !ShareCircuit(b, prev) || b.CircuitState() != CircuitOpen {
		t.Fatalf("unchanged: not shared (state %d)", b.CircuitState())
	}
	before := len(prevReports)
	b.breaker.result(time.Now(), chargeNone, OutcomeOK)
	if got := reports[len(reports)-1]; got != CircuitClosed || len(prevReports) != before {
		t.Errorf("the close after sharing was reported to the new hook as %d, to the old %d more times", got, len(prevReports)-before)
	}
}
