package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// newFakeClock returns the manual clock the store tests inject.
func newFakeClock() *mcptest.Clock {
	return mcptest.NewClock(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC))
}

// harness is one fresh, empty store plus a way to let time pass for it.
type harness struct {
	store Store
	// elapse lets d pass for both the store's injected clock and any
	// server-side expiry (Redis PX runs on the server's own clock).
	elapse func(d time.Duration)
}

// runContract is the behaviour every Store must show. newHarness returns a
// store that shares no keys with any other harness.
func runContract(t *testing.T, newHarness func(t *testing.T) harness) {
	t.Run("UseOnce", func(t *testing.T) { contractUseOnce(t, newHarness(t)) })
	t.Run("UseOnceConcurrent", func(t *testing.T) { contractUseOnceConcurrent(t, newHarness(t)) })
	t.Run("AllowBurst", func(t *testing.T) { contractAllowBurst(t, newHarness) })
	t.Run("AllowRefill", func(t *testing.T) { contractAllowRefill(t, newHarness(t)) })
	t.Run("AllowKeysIndependent", func(t *testing.T) { contractAllowKeys(t, newHarness(t)) })
	t.Run("AllowConcurrent", func(t *testing.T) { contractAllowConcurrent(t, newHarness(t)) })
	t.Run("AllowInvalidLimit", func(t *testing.T) { contractAllowInvalid(t, newHarness(t)) })
	t.Run("GetSet", func(t *testing.T) { contractGetSet(t, newHarness(t)) })
	t.Run("SetNX", func(t *testing.T) { contractSetNX(t, newHarness(t)) })
	t.Run("Swap", func(t *testing.T) { contractSwap(t, newHarness(t)) })
	t.Run("KindsSeparate", func(t *testing.T) { contractKinds(t, newHarness(t)) })
	t.Run("Hold", func(t *testing.T) { contractHold(t, newHarness(t)) })
	t.Run("HoldConcurrent", func(t *testing.T) { contractHoldConcurrent(t, newHarness(t)) })
	t.Run("Delete", func(t *testing.T) { contractDelete(t, newHarness(t)) })
	t.Run("PingClose", func(t *testing.T) { contractPingClose(t, newHarness(t)) })
	t.Run("Records", func(t *testing.T) { contractRecords(t, newHarness(t)) })
	t.Run("RecordsExpire", func(t *testing.T) { contractRecordsExpire(t, newHarness(t)) })
	t.Run("Replay", func(t *testing.T) { contractReplay(t, newHarness(t)) })
	t.Run("ReplayGet", func(t *testing.T) { contractReplayGet(t, newHarness(t)) })
	t.Run("ReplayConcurrent", func(t *testing.T) { contractReplayConcurrent(t, newHarness(t)) })
	t.Run("ReplayOnce", func(t *testing.T) { contractReplayOnce(t, newHarness(t)) })
}

func contractUseOnce(t *testing.T, h harness) {
	ctx := context.Background()
	// Redis expires keys on its own clock: the TTL leaves room for the steps before "replay
	// before expiry" on a busy machine (a 50 ms TTL sometimes ran out there).
	const ttl = time.Second
	steps := []struct {
		name   string
		key    string
		elapse time.Duration
		want   bool
	}{
		{name: "first use", key: "nonce-a", want: true},
		{name: "replay", key: "nonce-a", want: false},
		{name: "other key", key: "nonce-b", want: true},
		{name: "replay before expiry", key: "nonce-a", elapse: ttl / 2, want: false},
		{name: "after expiry", key: "nonce-a", elapse: ttl, want: true},
		{name: "replay after re-use", key: "nonce-a", want: false},
	}
	for _, s := range steps {
		h.elapse(s.elapse)
		got, err := h.store.UseOnce(ctx, s.key, ttl)
		if err != nil {
			t.Fatalf("%s: UseOnce: %v", s.name, err)
		}
		if got != s.want {
			t.Fatalf("%s: UseOnce(%q) = %v, want %v", s.name, s.key, got, s.want)
		}
	}
	for _, ttl := range []time.Duration{0, -time.Second} {
		if _, err := h.store.UseOnce(ctx, "nonce-c", ttl); !errors.Is(err, ErrInvalidTTL) {
			t.Errorf("UseOnce(ttl=%v) err = %v, want ErrInvalidTTL", ttl, err)
		}
	}
}

func contractUseOnceConcurrent(t *testing.T, h harness) {
	const goroutines, keys = 32, 8
	for k := range keys {
		key := fmt.Sprintf("race-%d", k)
		var winners atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range goroutines {
			wg.Go(func() {
				<-start
				first, err := h.store.UseOnce(context.Background(), key, time.Minute)
				if err != nil {
					t.Errorf("UseOnce: %v", err)
				}
				if first {
					winners.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if n := winners.Load(); n != 1 {
			t.Fatalf("key %s: %d winners among %d goroutines, want exactly 1", key, n, goroutines)
		}
	}
}

// allowStep is one expected Allow outcome.
type allowStep struct {
	allowed    bool
	remaining  int
	retryAfter time.Duration
}

func contractAllowBurst(t *testing.T, newHarness func(t *testing.T) harness) {
	tests := []struct {
		name  string
		limit string
		want  []allowStep
	}{
		{name: "explicit burst", limit: "5/m burst 3", want: []allowStep{
			{true, 2, 0}, {true, 1, 0}, {true, 0, 0}, {false, 0, 12 * time.Second}, {false, 0, 12 * time.Second},
		}},
		{name: "burst defaults to rate", limit: "2/s", want: []allowStep{
			{true, 1, 0}, {true, 0, 0}, {false, 0, 500 * time.Millisecond},
		}},
		{name: "burst one", limit: "1000/h burst 1", want: []allowStep{
			{true, 0, 0}, {false, 0, 3600 * time.Millisecond},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			limit, err := ParseLimit(tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tt.want {
				d, err := h.store.Allow(context.Background(), "client", limit)
				if err != nil {
					t.Fatalf("call %d: Allow: %v", i, err)
				}
				got := allowStep{d.Allowed, d.Remaining, d.RetryAfter}
				if got != w || d.Limit != limit {
					t.Fatalf("call %d: got %+v (limit %v), want %+v (limit %v)", i, got, d.Limit, w, limit)
				}
			}
		})
	}
}

func contractAllowRefill(t *testing.T, h harness) {
	limit := Limit{Rate: 10, Period: time.Second, Burst: 2} // one token per 100ms
	steps := []struct {
		elapse time.Duration
		want   allowStep
	}{
		{0, allowStep{true, 1, 0}},
		{0, allowStep{true, 0, 0}},
		{0, allowStep{false, 0, 100 * time.Millisecond}},
		{40 * time.Millisecond, allowStep{false, 0, 60 * time.Millisecond}},
		{60 * time.Millisecond, allowStep{true, 0, 0}},
		{250 * time.Millisecond, allowStep{true, 1, 0}}, // bucket full again: capacity caps refill
		{0, allowStep{true, 0, 0}},
		{0, allowStep{false, 0, 100 * time.Millisecond}},
	}
	for i, s := range steps {
		h.elapse(s.elapse)
		d, err := h.store.Allow(context.Background(), "refill", limit)
		if err != nil {
			t.Fatalf("step %d: Allow: %v", i, err)
		}
		if got := (allowStep{d.Allowed, d.Remaining, d.RetryAfter}); got != s.want {
			t.Fatalf("step %d: got %+v, want %+v", i, got, s.want)
		}
	}
}

func contractAllowKeys(t *testing.T, h harness) {
	limit := Limit{Rate: 1, Period: time.Hour, Burst: 1}
	ctx := context.Background()
	if d, err := h.store.Allow(ctx, "alice", limit); err != nil || !d.Allowed {
		t.Fatalf("alice first: %+v, %v", d, err)
	}
	if d, err := h.store.Allow(ctx, "alice", limit); err != nil || d.Allowed {
		t.Fatalf("alice second: %+v, %v; want denied", d, err)
	}
	if d, err := h.store.Allow(ctx, "bob", limit); err != nil || !d.Allowed {
		t.Fatalf("bob after alice exhausted: %+v, %v; want allowed", d, err)
	}
}

func contractAllowConcurrent(t *testing.T, h harness) {
	const burst, goroutines, calls = 20, 8, 10
	limit := Limit{Rate: 1, Period: time.Hour, Burst: burst}
	var admitted atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range goroutines {
		wg.Go(func() {
			<-start
			for range calls {
				d, err := h.store.Allow(context.Background(), "shared", limit)
				if err != nil {
					t.Errorf("Allow: %v", err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if n := admitted.Load(); n != burst {
		t.Fatalf("admitted %d of %d concurrent calls, want exactly the burst %d", n, goroutines*calls, burst)
	}
}

func contractAllowInvalid(t *testing.T, h harness) {
	for _, l := range []Limit{{}, {Rate: 1}, {Rate: -1, Period: time.Second}, {Rate: 10, Period: time.Microsecond}} {
		if _, err := h.store.Allow(context.Background(), "k", l); !errors.Is(err, ErrInvalidLimit) {
			t.Errorf("Allow(%+v) err = %v, want ErrInvalidLimit", l, err)
		}
	}
}

func contractGetSet(t *testing.T, h harness) {
	ctx := context.Background()
	const ttl = 50 * time.Millisecond
	mustGet := func(key string, want []byte, wantOK bool) {
		t.Helper()
		got, ok, err := h.store.Get(ctx, key)
		if err != nil || ok != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("Get(%q) = %q, %v, %v; want %q, %v, nil", key, got, ok, err, want, wantOK)
		}
	}
	mustGet("list", nil, false)
	value := []byte("tools-v1")
	if err := h.store.Set(ctx, "list", value, ttl); err != nil {
		t.Fatalf("Set: %v", err)
	}
	value[0] = 'X' // the store must have kept its own copy
	mustGet("list", []byte("tools-v1"), true)
	if err := h.store.Set(ctx, "list", []byte("tools-v2"), ttl); err != nil {
		t.Fatalf("Set overwrite: %v", err)
	}
	mustGet("list", []byte("tools-v2"), true)
	if err := h.store.Set(ctx, "empty", []byte{}, ttl); err != nil {
		t.Fatalf("Set empty: %v", err)
	}
	mustGet("empty", nil, true)
	h.elapse(ttl + 20*time.Millisecond)
	mustGet("list", nil, false)
	mustGet("empty", nil, false)
	if err := h.store.Set(ctx, "list", []byte("x"), 0); !errors.Is(err, ErrInvalidTTL) {
		t.Errorf("Set(ttl=0) err = %v, want ErrInvalidTTL", err)
	}
}

func contractKinds(t *testing.T, h harness) {
	ctx := context.Background()
	if first, err := h.store.UseOnce(ctx, "same", time.Minute); err != nil || !first {
		t.Fatalf("UseOnce: %v, %v", first, err)
	}
	if _, ok, err := h.store.Get(ctx, "same"); err != nil || ok {
		t.Fatalf("Get after UseOnce of the same key: found=%v err=%v, want a miss", ok, err)
	}
	if d, err := h.store.Allow(ctx, "same", Limit{Rate: 1, Period: time.Hour}); err != nil || !d.Allowed {
		t.Fatalf("Allow after UseOnce of the same key: %+v, %v", d, err)
	}
}

func contractPingClose(t *testing.T, h harness) {
	ctx := context.Background()
	if err := h.store.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if err := h.store.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := h.store.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := h.store.Ping(ctx); !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrClosed) {
		t.Fatalf("Ping after Close err = %v, want ErrUnavailable and ErrClosed", err)
	}
	if _, err := h.store.UseOnce(ctx, "k", time.Minute); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("UseOnce after Close err = %v, want ErrUnavailable", err)
	}
}
