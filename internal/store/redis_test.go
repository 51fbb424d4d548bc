package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// hangGuard bounds a call that must return on its own (by the store's
// timeouts) so a regression shows as a failure instead of a stuck test run.
const hangGuard = 30 * time.Second

func newRedisStore(t *testing.T, cfg RedisConfig, opts ...RedisOption) *Redis {
	t.Helper()
	r, err := NewRedis(cfg, opts...)
	if err != nil {
		t.Fatalf("NewRedis: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// rawClient is a plain go-redis client for inspecting what the store wrote.
func rawClient(t *testing.T, srv *testredis.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: srv.Password(), DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRedisContract(t *testing.T) {
	t.Parallel() // its own redis-server; it waits on expiries and timeouts, not on a core
	srv := testredis.Start(t)
	var n atomic.Int32
	runContract(t, func(t *testing.T) harness {
		clock := newFakeClock()
		r := newRedisStore(t, RedisConfig{URL: srv.URL(), KeyPrefix: fmt.Sprintf("c%d:", n.Add(1))}, WithClock(clock.Now))
		return harness{store: r, elapse: func(d time.Duration) {
			clock.Advance(d)
			time.Sleep(d) // PX expiry runs on the server's clock
		}}
	})
}

func TestRedisServerTime(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL()})
	ctx := context.Background()
	limit := mustParseLimit(t, "3/h")
	for i := range 3 {
		if d, err := r.Allow(ctx, "k", limit); err != nil || !d.Allowed || d.Remaining != 2-i {
			t.Fatalf("call %d: %+v, %v; want allowed with %d remaining", i, d, err, 2-i)
		}
	}
	d, err := r.Allow(ctx, "k", limit)
	if err != nil || d.Allowed {
		t.Fatalf("fourth call: %+v, %v; want denied", d, err)
	}
	if d.RetryAfter <= 0 || d.RetryAfter > 20*time.Minute {
		t.Fatalf("RetryAfter = %v, want within (0, 20m]", d.RetryAfter)
	}

	// Refill on the server's clock: wait out RetryAfter, then poll (bounded)
	// until the token is back.
	fast := Limit{Rate: 1, Period: time.Second, Burst: 1}
	if d, err := r.Allow(ctx, "fast", fast); err != nil || !d.Allowed {
		t.Fatalf("fast first: %+v, %v", d, err)
	}
	d, err = r.Allow(ctx, "fast", fast)
	if err != nil || d.Allowed {
		t.Fatalf("fast second: %+v, %v; want denied", d, err)
	}
	time.Sleep(d.RetryAfter)
	for i := 0; ; i++ {
		d, err := r.Allow(ctx, "fast", fast)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			break
		}
		if i == 50 {
			t.Fatalf("still denied after waiting RetryAfter and 50 polls: %+v", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mustParseLimit parses s or fails t.
func mustParseLimit(t *testing.T, s string) Limit {
	t.Helper()
	l, err := ParseLimit(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRedisTwoReplicasShareState(t *testing.T) {
	srv := testredis.Start(t)
	a := newRedisStore(t, RedisConfig{URL: srv.URL()})
	b := newRedisStore(t, RedisConfig{Addrs: []string{srv.Addr()}})
	ctx := context.Background()

	if first, err := a.UseOnce(ctx, "nonce", time.Minute); err != nil || !first {
		t.Fatalf("replica A UseOnce: %v, %v", first, err)
	}
	if first, err := b.UseOnce(ctx, "nonce", time.Minute); err != nil || first {
		t.Fatalf("replica B replay: first=%v err=%v, want false", first, err)
	}
	if err := a.Set(ctx, "list", []byte("merged"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := b.Get(ctx, "list"); err != nil || !ok || string(v) != "merged" {
		t.Fatalf("replica B Get = %q, %v, %v", v, ok, err)
	}

	const burst = 10
	limit := Limit{Rate: 1, Period: time.Hour, Burst: burst}
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		s := []*Redis{a, b}[i%2]
		wg.Go(func() {
			for range 5 {
				d, err := s.Allow(ctx, "tenant", limit)
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
	wg.Wait()
	if n := admitted.Load(); n != burst {
		t.Fatalf("two replicas admitted %d, want exactly the shared burst %d", n, burst)
	}
}

// storeOps calls every operation once and returns their errors by name.
func storeOps(ctx context.Context, s Store) map[string]error {
	errs := map[string]error{}
	_, errs["UseOnce"] = s.UseOnce(ctx, "n", time.Minute)
	_, errs["Allow"] = s.Allow(ctx, "k", Limit{Rate: 1, Period: time.Second})
	_, _, errs["Get"] = s.Get(ctx, "v")
	errs["Set"] = s.Set(ctx, "v", []byte("x"), time.Minute)
	_, errs["Swap"] = s.Swap(ctx, "v", []byte("x"), []byte("y"))
	errs["Ping"] = s.Ping(ctx)
	return errs
}

// opsWithinGuard runs storeOps and fails t if they do not return by hangGuard.
func opsWithinGuard(t *testing.T, ctx context.Context, s Store) map[string]error {
	t.Helper()
	done := make(chan map[string]error, 1)
	go func() { done <- storeOps(ctx, s) }()
	select {
	case errs := <-done:
		return errs
	case <-time.After(hangGuard):
		t.Fatalf("store operations did not return within %v", hangGuard)
		return nil
	}
}

func TestRedisStoppedThenRestarted(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), DialTimeout: 500 * time.Millisecond})
	ctx := context.Background()
	if err := r.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	for op, err := range opsWithinGuard(t, ctx, r) {
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s with Redis stopped: err = %v, want ErrUnavailable", op, err)
		}
	}
	srv.Restart()
	waitPing(t, r)
	for op, err := range opsWithinGuard(t, ctx, r) {
		if err != nil {
			t.Errorf("%s after restart: %v", op, err)
		}
	}
}

// waitPing polls until r answers, bounded, after a server restart.
func waitPing(t *testing.T, r *Redis) {
	t.Helper()
	// Up to 10 s: the circuit breaker may skip Redis for its cooldown after the outage.
	var err error
	for range 500 {
		if err = r.Ping(context.Background()); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("Ping never recovered after restart: %v", err)
}

// blackhole accepts connections and never answers, like a hung Redis.
func blackhole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	t.Cleanup(func() {
		_ = l.Close()
		conns.Wait()
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(hangGuard))
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			})
		}
	}()
	return l.Addr().String()
}

func TestRedisHungServerTimesOut(t *testing.T) {
	addr := blackhole(t)
	r := newRedisStore(t, RedisConfig{
		Addrs:       []string{addr},
		ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
		MaxRetries: -1,
		// Every operation must meet the timeout itself here; the breaker, which would skip
		// the later ones, has its own test.
		Breaker: RedisBreaker{Failures: -1},
	})
	for op, err := range opsWithinGuard(t, context.Background(), r) {
		var netErr net.Error
		if !errors.Is(err, ErrUnavailable) || !errors.As(err, &netErr) || !netErr.Timeout() {
			t.Errorf("%s against a hung server: err = %v, want ErrUnavailable wrapping a timeout", op, err)
		}
	}
}

func TestRedisCallerContext(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for op, err := range opsWithinGuard(t, ctx, r) {
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: err = %v, want ErrUnavailable and context.Canceled", op, err)
		}
	}
}

func TestRedisAuth(t *testing.T) {
	srv := testredis.Start(t, testredis.WithPassword("pa55"))
	noPass := "redis://" + srv.Addr() + "/0"
	tests := []struct {
		name    string
		cfg     RedisConfig
		wantErr bool
	}{
		{name: "password in url", cfg: RedisConfig{URL: srv.URL()}},
		{name: "password field", cfg: RedisConfig{URL: noPass, Password: "pa55"}},
		{name: "password field overrides url", cfg: RedisConfig{URL: "redis://:wrong@" + srv.Addr(), Password: "pa55"}},
		{name: "addrs with password", cfg: RedisConfig{Addrs: []string{srv.Addr()}, Password: "pa55"}},
		{name: "missing password", cfg: RedisConfig{URL: noPass}, wantErr: true},
		{name: "wrong password", cfg: RedisConfig{URL: noPass, Password: "nope"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newRedisStore(t, tt.cfg).Ping(context.Background())
			if (err != nil) != tt.wantErr {
				t.Fatalf("Ping err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrUnavailable) {
				t.Fatalf("auth failure err = %v, want ErrUnavailable", err)
			}
			if err != nil && strings.Contains(err.Error(), "nope") {
				t.Fatalf("error %q repeats the password", err)
			}
		})
	}
}

func TestRedisKeysBoundedAndHashed(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL()})
	ctx := context.Background()
	huge := strings.Repeat("subject-", 128<<10) // 1 MiB of hostile key
	if _, err := r.UseOnce(ctx, huge, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Allow(ctx, "user@example.com", Limit{Rate: 1, Period: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := r.Set(ctx, "tools/list", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	keys, err := rawClient(t, srv).Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	// The single use, the bucket, the value, and the rate-limit charge's marker (ratecharge.go),
	// which names its bucket's key as its hash tag and the call's token.
	if len(keys) != 4 {
		t.Fatalf("keys = %q, want 4", keys)
	}
	const maxLen = len(DefaultKeyPrefix) + len("once:") + 43
	const maxMarkerLen = len(DefaultKeyPrefix) + len("rlc:{") + len(DefaultKeyPrefix) + len("rl:") + 43 + len("}:") +
		26 + 13 // the token: rand.Text and a base-36 sequence number
	for _, k := range keys {
		bound := maxLen
		if strings.HasPrefix(k, DefaultKeyPrefix+"rlc:{") {
			bound = maxMarkerLen
		}
		if !strings.HasPrefix(k, DefaultKeyPrefix) || len(k) > bound {
			t.Errorf("key %q: want prefix %q and at most %d bytes", k, DefaultKeyPrefix, bound)
		}
		if strings.Contains(k, "example.com") || strings.Contains(k, "tools") {
			t.Errorf("key %q holds the caller's key in clear", k)
		}
	}
}

func TestRedisScriptCacheFlushed(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL()})
	ctx := context.Background()
	limit := Limit{Rate: 1, Period: time.Hour, Burst: 2}
	if d, err := r.Allow(ctx, "k", limit); err != nil || !d.Allowed {
		t.Fatalf("Allow: %+v, %v", d, err)
	}
	if err := rawClient(t, srv).ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// EVALSHA now fails with NOSCRIPT; the store must fall back to EVAL.
	if d, err := r.Allow(ctx, "k", limit); err != nil || !d.Allowed || d.Remaining != 0 {
		t.Fatalf("Allow after SCRIPT FLUSH: %+v, %v; want allowed with 0 remaining", d, err)
	}
}

func TestRedisClusterContract(t *testing.T) {
	t.Parallel() // its own redis-server; it waits on expiries and timeouts, not on a core
	srv := testredis.Start(t, testredis.WithCluster())
	var n atomic.Int32
	runContract(t, func(t *testing.T) harness {
		clock := newFakeClock()
		r := newRedisStore(t, RedisConfig{Addrs: []string{srv.Addr()}, Cluster: true,
			KeyPrefix: fmt.Sprintf("c%d:", n.Add(1))}, WithClock(clock.Now))
		return harness{store: r, elapse: func(d time.Duration) {
			clock.Advance(d)
			time.Sleep(d)
		}}
	})
}

func TestRedisSentinel(t *testing.T) {
	master := testredis.Start(t, testredis.WithPassword("masterpw"))
	sentinel := testredis.Start(t, testredis.WithSentinelFor(master, "gw"), testredis.WithPassword("sentinelpw"))
	r := newRedisStore(t, RedisConfig{
		Addrs: []string{sentinel.Addr()}, MasterName: "gw",
		Password: "masterpw", SentinelPassword: "sentinelpw",
	})
	ctx := context.Background()
	if first, err := r.UseOnce(ctx, "nonce", time.Minute); err != nil || !first {
		t.Fatalf("UseOnce through Sentinel: %v, %v", first, err)
	}
	if d, err := r.Allow(ctx, "k", Limit{Rate: 1, Period: time.Hour}); err != nil || !d.Allowed {
		t.Fatalf("Allow through Sentinel: %+v, %v", d, err)
	}
	// The writes (the use, the bucket and its charge's marker) must have reached the master
	// Sentinel pointed to.
	n, err := master.Do("DBSIZE")
	if err != nil || n != "3" {
		t.Fatalf("master DBSIZE = %q, %v; want 3", n, err)
	}
}
