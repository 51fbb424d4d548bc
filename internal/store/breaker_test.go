package store

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// countingHook counts the commands the client really sends to Redis.
type countingHook struct{ n atomic.Int64 }

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// TestRedisBreakerSkipsPausedRedis pauses a real redis-server (SIGSTOP): after the configured
// number of failures the store stops sending commands, answers ErrSkipped at once (so the
// caller's fail-open rule applies without waiting), still never admits a single-use key, lets
// one probe through after the cooldown, and closes again once Redis answers.
func TestRedisBreakerSkipsPausedRedis(t *testing.T) {
	srv := testredis.Start(t)
	var mu sync.Mutex
	var states []BreakerState
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), ReadTimeout: 200 * time.Millisecond,
		WriteTimeout: 200 * time.Millisecond, MaxRetries: -1,
		Breaker: RedisBreaker{Failures: 3, Cooldown: time.Minute}},
		WithBreakerHook(func(s BreakerState) { mu.Lock(); states = append(states, s); mu.Unlock() }))
	clock := newFakeClock()
	r.brk.now = clock.Now
	hook := &countingHook{}
	r.client.AddHook(hook)
	ctx := context.Background()
	limit := Limit{Rate: 100, Period: time.Second}
	if _, err := r.Allow(ctx, "warm", limit); err != nil {
		t.Fatal(err)
	}

	// An error reply is an answer: it never counts toward opening.
	for range 5 {
		if err := r.client.Do(ctx, "NOSUCHCOMMAND").Err(); err == nil || classify(err) != outcomeOK {
			t.Fatalf("error reply %v classified %v, want an answer", err, classify(err))
		}
	}
	srv.Pause()
	for i := range 3 {
		_, err := r.Allow(ctx, "k", limit)
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrSkipped) {
			t.Fatalf("failure %d: err = %v, want a real ErrUnavailable (Redis was asked)", i, err)
		}
	}
	if got := r.BreakerState(); got != BreakerOpen {
		t.Fatalf("after 3 failures the breaker is %v, want open", got)
	}
	sent := hook.n.Load()
	for i := range 50 {
		if _, err := r.Allow(ctx, "k", limit); !errors.Is(err, ErrSkipped) || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Allow %d while open: err = %v, want ErrSkipped wrapped in ErrUnavailable", i, err)
		}
	}
	first, err := r.UseOnce(ctx, "nonce", time.Minute)
	if first || !errors.Is(err, ErrSkipped) {
		t.Fatalf("UseOnce while open = %v, %v; want false with ErrSkipped (fail closed)", first, err)
	}
	if _, _, err := r.Get(ctx, "v"); !errors.Is(err, ErrSkipped) {
		t.Fatalf("Get while open: %v, want ErrSkipped", err)
	}
	if got := hook.n.Load(); got != sent {
		t.Fatalf("the open breaker sent %d commands to Redis, want 0", got-sent)
	}
	if got := r.Skipped(); got != 52 {
		t.Fatalf("Skipped() = %d, want 52", got)
	}

	// Cooldown over, Redis still paused: exactly one probe goes out, fails, and reopens.
	clock.Advance(time.Minute)
	var wg sync.WaitGroup
	var skipped atomic.Int32
	for range 8 {
		wg.Go(func() {
			if _, err := r.Allow(ctx, "k", limit); errors.Is(err, ErrSkipped) {
				skipped.Add(1)
			}
		})
	}
	wg.Wait()
	if skipped.Load() != 7 {
		t.Fatalf("half-open: %d of 8 calls skipped, want 7 (one probe)", skipped.Load())
	}
	if got := r.BreakerState(); got != BreakerOpen {
		t.Fatalf("after a failed probe the breaker is %v, want open", got)
	}

	// Redis back: the next probe closes the breaker and everything works again.
	srv.Resume()
	if _, err := r.Allow(ctx, "k", limit); !errors.Is(err, ErrSkipped) {
		t.Fatalf("before the cooldown passes again: err = %v, want ErrSkipped", err)
	}
	clock.Advance(time.Minute)
	var d RateDecision
	for range 50 { // the probe may meet a connection the pause broke; bounded retries
		if d, err = r.Allow(ctx, "k", limit); err == nil {
			break
		}
		clock.Advance(time.Minute)
	}
	if err != nil || !d.Allowed {
		t.Fatalf("after Resume: %+v, %v; want allowed", d, err)
	}
	if got := r.BreakerState(); got != BreakerClosed {
		t.Fatalf("after a good probe the breaker is %v, want closed", got)
	}
	if first, err := r.UseOnce(ctx, "nonce", time.Minute); !first || err != nil {
		t.Fatalf("UseOnce after recovery = %v, %v; want first use", first, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(states) < 4 || states[0] != BreakerOpen || states[len(states)-1] != BreakerClosed {
		t.Fatalf("state changes %v, want open … half-open, open … closed", states)
	}
}

func TestBreakerClassify(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		err  error
		want outcome
	}{
		{"success", nil, outcomeOK},
		{"nil reply", redis.Nil, outcomeOK},
		{"timeout", &net.OpError{Op: "read", Err: context.DeadlineExceeded}, outcomeFailed},
		{"deadline", context.DeadlineExceeded, outcomeFailed},
		{"caller gave up", ctx.Err(), outcomeNeutral},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("%s: classify(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

func TestBreakerDisabled(t *testing.T) {
	b := newBreaker(RedisBreaker{Failures: -1}, nil, nil)
	for range 10 {
		ok, _ := b.admit()
		if !ok {
			t.Fatal("a disabled breaker skipped a command")
		}
		b.done(false, outcomeFailed)
	}
}

func TestBreakerConfigValidate(t *testing.T) {
	for _, b := range []RedisBreaker{{Failures: -2}, {Cooldown: -time.Second}, {Cooldown: time.Hour}} {
		if err := (RedisConfig{URL: "redis://127.0.0.1:6379", Breaker: b}).Validate(); err == nil {
			t.Errorf("Validate accepted breaker %+v", b)
		}
	}
}
