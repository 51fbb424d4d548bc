package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// newLeased builds a Leased over its own Redis client (as one replica would have) with a
// shared fake clock for the store and the leases.
func newLeased(t *testing.T, srv *testredis.Server, prefix string, clock *mcptest.Clock, opts LeaseOptions) (*Leased, *Redis) {
	t.Helper()
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), KeyPrefix: prefix}, WithClock(clock.Now))
	opts.Now = clock.Now
	l, err := NewLeased(r, opts)
	if err != nil {
		t.Fatalf("NewLeased: %v", err)
	}
	return l, r
}

// TestLeaseScriptOneTokenMatchesAllow checks that a lease of one token is exactly the GCRA step
// of Allow: the same decisions and the same bucket afterwards, refill included.
func TestLeaseScriptOneTokenMatchesAllow(t *testing.T) {
	srv := testredis.Start(t)
	clock := newFakeClock()
	a := newRedisStore(t, RedisConfig{URL: srv.URL(), KeyPrefix: "allow:"}, WithClock(clock.Now))
	b := newRedisStore(t, RedisConfig{URL: srv.URL(), KeyPrefix: "lease:"}, WithClock(clock.Now))
	ctx := context.Background()
	limit := mustParseLimit(t, "10/s burst 4")
	for i := range 30 {
		da, err := a.Allow(ctx, "k", limit)
		if err != nil {
			t.Fatal(err)
		}
		n, db, err := b.Lease(ctx, "k", limit, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if da != db || (n == 1) != da.Allowed {
			t.Fatalf("step %d: Allow = %+v, Lease = %d %+v", i, da, n, db)
		}
		if i%3 == 2 {
			clock.Advance(70 * time.Millisecond)
		}
	}
}

// TestLeaseScriptGrantsWhatIsLeft checks the k-token step: a lease takes at most what the bucket
// holds, a refund gives back at most a full bucket, and an empty bucket says when to retry.
func TestLeaseScriptGrantsWhatIsLeft(t *testing.T) {
	srv := testredis.Start(t)
	clock := newFakeClock()
	r := newRedisStore(t, RedisConfig{URL: srv.URL()}, WithClock(clock.Now))
	ctx := context.Background()
	limit := mustParseLimit(t, "1/s burst 10")
	steps := []struct {
		want, refund, granted, remaining int
	}{
		{want: 4, granted: 4, remaining: 6},
		{want: 4, granted: 4, remaining: 2},
		{want: 4, granted: 2, remaining: 0},
		{want: 4, granted: 0, remaining: 0},
		{want: 4, refund: 3, granted: 3, remaining: 0},
		{want: 1, refund: 10, granted: 1, remaining: 9}, // a refund never overfills the bucket
	}
	for i, s := range steps {
		n, d, err := r.Lease(ctx, "k", limit, s.want, s.refund)
		if err != nil {
			t.Fatal(err)
		}
		if n != s.granted || d.Remaining != s.remaining || d.Allowed != (n > 0) {
			t.Fatalf("step %d: granted %d remaining %d allowed %v, want %d %d", i, n, d.Remaining, d.Allowed, s.granted, s.remaining)
		}
		if n == 0 && d.RetryAfter != time.Second {
			t.Fatalf("step %d: RetryAfter = %v, want 1s", i, d.RetryAfter)
		}
	}
	if _, _, err := r.Lease(ctx, "k", limit, 11, 0); !errors.Is(err, ErrInvalidLimit) {
		t.Fatalf("a lease above the burst: err = %v, want ErrInvalidLimit", err)
	}
}

// TestLeasedReplicasNeverExceedTheBucket runs three replicas' leases against one Redis bucket
// with the clock stopped (no refill): together they admit exactly the burst, no more (every
// admitted call was paid for in Redis) and no less (a replica refuses only once its own lease is
// spent and the bucket is empty).
func TestLeasedReplicasNeverExceedTheBucket(t *testing.T) {
	srv := testredis.Start(t)
	clock := newFakeClock()
	limit := mustParseLimit(t, "100/h burst 100")
	var replicas []*Leased
	for range 3 {
		l, _ := newLeased(t, srv, "shared:", clock, LeaseOptions{})
		if got := l.LeaseSize(limit); got != 12 {
			t.Fatalf("LeaseSize = %d, want 12 (burst/8)", got)
		}
		replicas = append(replicas, l)
	}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			l := replicas[i%3]
			for {
				d, err := l.Allow(context.Background(), "caller", limit)
				if err != nil {
					t.Error(err)
					return
				}
				if !d.Allowed {
					return
				}
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	if got := admitted.Load(); got != 100 {
		t.Fatalf("admitted %d calls under a bucket of 100, want exactly 100", got)
	}
}

// TestLeasedGivesBackWhatItDidNotSpend checks that an expired lease's rest returns to the shared
// bucket with the next lease, so a caller well below the limit is never refused for tokens its
// replica leased and let expire.
func TestLeasedGivesBackWhatItDidNotSpend(t *testing.T) {
	srv := testredis.Start(t)
	clock := newFakeClock()
	l, r := newLeased(t, srv, "refund:", clock, LeaseOptions{Max: 16, TTL: time.Second})
	ctx := context.Background()
	limit := mustParseLimit(t, "1/h burst 128")
	// One call per two seconds, far below 128 per burst: each leases 16 and spends one.
	for i := range 40 {
		d, err := l.Allow(ctx, "slow", limit)
		if err != nil || !d.Allowed {
			t.Fatalf("call %d: %+v, %v; want admitted", i, d, err)
		}
		clock.Advance(2 * time.Second)
	}
	// The bucket holds 128 − 40 (spent) − 16 (the live lease) + refill, not 128 − 40 × 16.
	n, _, err := r.Lease(ctx, "slow", limit, 1, 0)
	if err != nil || n != 1 {
		t.Fatalf("after 40 slow calls the bucket is empty: granted %d, %v", n, err)
	}
}

// TestLeasedOneTokenLimitsStayExact checks that a limit whose burst is too small to lease from is
// asked of the store on every call.
func TestLeasedOneTokenLimitsStayExact(t *testing.T) {
	srv := testredis.Start(t)
	clock := newFakeClock()
	a, _ := newLeased(t, srv, "exact:", clock, LeaseOptions{})
	b, _ := newLeased(t, srv, "exact:", clock, LeaseOptions{})
	limit := mustParseLimit(t, "5/m")
	if got := a.LeaseSize(limit); got != 1 {
		t.Fatalf("LeaseSize(5/m) = %d, want 1", got)
	}
	ctx := context.Background()
	admitted := 0
	for i := range 10 {
		l := a
		if i%2 == 1 {
			l = b
		}
		d, err := l.Allow(ctx, "k", limit)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			admitted++
		}
	}
	if admitted != 5 {
		t.Fatalf("admitted %d, want 5", admitted)
	}
}

// TestLeasedStoreDown checks that a lease already held is spent while Redis is down, and that
// the next call then reports ErrUnavailable for the caller's fail-open or fail-closed rule.
func TestLeasedStoreDown(t *testing.T) {
	srv := testredis.Start(t)
	clock := newFakeClock()
	l, _ := newLeased(t, srv, "down:", clock, LeaseOptions{Max: 4})
	ctx := context.Background()
	limit := mustParseLimit(t, "1000/s burst 1000")
	if d, err := l.Allow(ctx, "k", limit); err != nil || !d.Allowed {
		t.Fatalf("first call: %+v, %v", d, err)
	}
	srv.Stop()
	for i := range 3 {
		if d, err := l.Allow(ctx, "k", limit); err != nil || !d.Allowed {
			t.Fatalf("leased call %d with Redis down: %+v, %v; want admitted from the lease", i, d, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	if _, err := l.Allow(ctx, "k", limit); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("lease spent, Redis down: err = %v, want ErrUnavailable", err)
	}
}

// TestLeasedKeyCap checks that keys beyond MaxKeys are limited exactly, one token per call,
// rather than growing the lease table.
func TestLeasedKeyCap(t *testing.T) {
	srv := testredis.Start(t)
	clock := newFakeClock()
	l, _ := newLeased(t, srv, "cap:", clock, LeaseOptions{MaxKeys: 1})
	ctx := context.Background()
	limit := mustParseLimit(t, "1000/h burst 160")
	for _, key := range []string{"a", "b", "c", "d"} {
		if d, err := l.Allow(ctx, key, limit); err != nil || !d.Allowed {
			t.Fatalf("%s: %+v, %v", key, d, err)
		}
	}
	held := 0
	for i := range l.shards {
		held += len(l.shards[i].entries)
	}
	if held > 64 { // one per shard at most
		t.Fatalf("%d leases held, want at most one per shard", held)
	}
}

// TestLeaseSizeAsDocumented: a lease is min(rateLimit.lease, burst ÷ 8) tokens, 64 by default,
// and a limit with a burst under 16 is not leased at all (docs/performance.md, "Shared rate
// limits").
func TestLeaseSizeAsDocumented(t *testing.T) {
	l, err := NewLeased(nil, LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	small, err := NewLeased(nil, LeaseOptions{Max: 16})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		l     *Leased
		burst int
		want  int
	}{{l, 15, 1}, {l, 16, 2}, {l, 130, 16}, {l, 512, 64}, {l, 10_000, 64}, {small, 10_000, 16}} {
		if got := c.l.LeaseSize(Limit{Rate: 10, Period: time.Second, Burst: c.burst}); got != c.want {
			t.Errorf("burst %d, max %d: lease of %d, want %d", c.burst, c.l.max, got, c.want)
		}
	}
}

// TestLeasedKeeps: a reload keeps a limiter only on the same store with the same options.
func TestLeasedKeeps(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL()})
	l, err := NewLeased(r, LeaseOptions{Max: 16})
	if err != nil {
		t.Fatal(err)
	}
	var none *Leased
	for _, tt := range []struct {
		l    *Leased
		s    Leaser
		opts LeaseOptions
		want bool
	}{
		{l, r, LeaseOptions{Max: 16}, true},
		{l, r, LeaseOptions{Max: 32}, false},
		{l, r, LeaseOptions{Max: 16, TTL: time.Minute}, false},
		{l, newRedisStore(t, RedisConfig{URL: srv.URL()}), LeaseOptions{Max: 16}, false},
		{none, r, LeaseOptions{Max: 16}, false},
	} {
		if got := tt.l.Keeps(tt.s, tt.opts); got != tt.want {
			t.Errorf("Keeps(%+v) = %v, want %v", tt.opts, got, tt.want)
		}
	}
}

// TestLeasedReplacedStrandsAtMostOneLease pins what a reload changing rateLimit.lease costs: the
// replaced limiter's unspent tokens are not given back (its table keeps keys only as digests),
// so the new one finds the bucket short of at most one lease of the old, and no more; that lease
// refills at the limit's rate like any spent token, within one window.
func TestLeasedReplacedStrandsAtMostOneLease(t *testing.T) {
	srv := testredis.Start(t)
	clock := newFakeClock()
	old, r := newLeased(t, srv, "reload:", clock, LeaseOptions{Max: 16})
	ctx := context.Background()
	limit := mustParseLimit(t, "8/s burst 128")
	if d, err := old.Allow(ctx, "k", limit); err != nil || !d.Allowed {
		t.Fatalf("the first call: %+v, %v", d, err)
	}
	next, err := NewLeased(r, LeaseOptions{Max: 8, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	admitted := 0
	for ; admitted <= 128; admitted++ {
		d, err := next.Allow(ctx, "k", limit)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed {
			break
		}
	}
	// 128, less the call made, less the rest of the old limiter's lease, stranded.
	if want := 128 - old.LeaseSize(limit); admitted != want {
		t.Fatalf("after the limiter was replaced %d calls were admitted at once, want %d: one lease stranded, no more", admitted, want)
	}
}
