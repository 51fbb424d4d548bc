package store

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// benchStores runs fn against a memory store and a Redis store on a real
// redis-server, so the two are reported side by side.
func benchStores(b *testing.B, fn func(b *testing.B, s Store)) {
	b.Run("memory", func(b *testing.B) {
		m, err := NewMemory(MemoryOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = m.Close() })
		fn(b, m)
	})
	b.Run("redis", func(b *testing.B) {
		srv := testredis.Start(b)
		r, err := NewRedis(RedisConfig{URL: srv.URL()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = r.Close() })
		fn(b, r)
	})
}

func BenchmarkUseOnce(b *testing.B) {
	// A short TTL keeps the benchmark in the steady state where expired
	// nonces are swept as fast as new ones arrive, instead of filling the
	// memory store's cap after a million iterations.
	const ttl = 10 * time.Millisecond
	benchStores(b, func(b *testing.B, s Store) {
		var n atomic.Int64
		ctx := context.Background()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.UseOnce(ctx, "nonce-"+strconv.FormatInt(n.Add(1), 10), ttl); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func BenchmarkAllow(b *testing.B) {
	limit := Limit{Rate: 1_000_000, Period: time.Second}
	benchStores(b, func(b *testing.B, s Store) {
		var n atomic.Int64
		ctx := context.Background()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			// A few hundred distinct buckets, as with per-subject limits.
			for pb.Next() {
				key := "subject-" + strconv.FormatInt(n.Add(1)%256, 10)
				if _, err := s.Allow(ctx, key, limit); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// callLimitsScript is option (b) of BenchmarkCallLimits: both limits of a call in one script.
// KEYS: the caller's bucket, then the caller × tool bucket. ARGV: interval and burst of each.
// The tool bucket is asked only when the caller's admits, as when the two are taken in turn.
// Measurement only: it shows what one round trip per call would cost without leasing.
const callLimitsScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
for i = 1, 2 do
  local interval = tonumber(ARGV[2 * i - 1])
  local burst = tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', KEYS[i])) or 0
  if tat < now then tat = now end
  local newtat = tat + interval
  if now < newtat - burst * interval then
    out[i] = 0
    return out
  end
  redis.call('SET', KEYS[i], string.format('%d', newtat), 'PX', math.ceil((newtat - now) / 1000))
  out[i] = 1
end
return out
`

// countingLeaser counts the round trips a Leased makes.
type countingLeaser struct {
	Leaser
	n *atomic.Int64
}

func (c countingLeaser) Lease(ctx context.Context, key string, l Limit, want, refund int) (int, RateDecision, error) {
	c.n.Add(1)
	return c.Leaser.Lease(ctx, key, l, want, refund)
}

// BenchmarkCallLimits compares ways of applying a call's two shared limits (per caller and per
// caller × tool, far above the load) against a real redis-server, at 32 concurrent callers:
//
//	two-evalsha   today: one script per limit, two round trips per call
//	one-script    both limits in one script: one round trip
//	pipelined     the two scripts in one pipeline: one round trip, two script runs
//	leased        local budgets leased from Redis (Leased): a round trip every LeaseSize calls
//
// rtt/op is Redis round trips per call.
func BenchmarkCallLimits(b *testing.B) {
	srv := testredis.Start(b)
	limit := Limit{Rate: 1_000_000, Period: time.Second}
	g, err := newGCRA(limit)
	if err != nil {
		b.Fatal(err)
	}
	newStore := func(b *testing.B) *Redis {
		r, err := NewRedis(RedisConfig{URL: srv.URL(), PoolSize: 64})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = r.Close() })
		return r
	}
	run := func(b *testing.B, rtt int64, call func(ctx context.Context, caller, tool string) error) {
		var n atomic.Int64
		ctx := context.Background()
		b.ReportAllocs()
		b.SetParallelism(16)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				s := strconv.FormatInt(n.Add(1)%8, 10) // a few callers, as in the gateway benchmark
				if err := call(ctx, "c|"+s, "t|"+s+"|fast|echo"); err != nil {
					b.Error(err)
					return
				}
			}
		})
		if rtt >= 0 {
			b.ReportMetric(float64(rtt)/float64(b.N), "rtt/op")
		}
	}
	b.Run("two-evalsha", func(b *testing.B) {
		r := newStore(b)
		run(b, 2*int64(b.N), func(ctx context.Context, caller, tool string) error {
			if _, err := r.Allow(ctx, caller, limit); err != nil {
				return err
			}
			_, err := r.Allow(ctx, tool, limit)
			return err
		})
	})
	b.Run("one-script", func(b *testing.B) {
		r := newStore(b)
		script := redis.NewScript(callLimitsScript)
		run(b, int64(b.N), func(ctx context.Context, caller, tool string) error {
			keys := []string{redisKey(r.prefix, kindRate, caller), redisKey(r.prefix, kindRate, tool)}
			return script.Run(ctx, r.client, keys, g.interval, g.burst, g.interval, g.burst).Err()
		})
	})
	b.Run("pipelined", func(b *testing.B) {
		r := newStore(b)
		if err := r.gcra.Load(context.Background(), r.client).Err(); err != nil {
			b.Fatal(err)
		}
		run(b, int64(b.N), func(ctx context.Context, caller, tool string) error {
			_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
				r.gcra.EvalSha(ctx, p, []string{redisKey(r.prefix, kindRate, caller)}, g.interval, g.burst, 0)
				r.gcra.EvalSha(ctx, p, []string{redisKey(r.prefix, kindRate, tool)}, g.interval, g.burst, 0)
				return nil
			})
			return err
		})
	})
	b.Run("leased", func(b *testing.B) {
		var trips atomic.Int64
		l, err := NewLeased(countingLeaser{Leaser: newStore(b), n: &trips}, LeaseOptions{})
		if err != nil {
			b.Fatal(err)
		}
		run(b, -1, func(ctx context.Context, caller, tool string) error {
			if _, err := l.Allow(ctx, caller, limit); err != nil {
				return err
			}
			_, err := l.Allow(ctx, tool, limit)
			return err
		})
		b.ReportMetric(float64(trips.Load())/float64(b.N), "rtt/op")
	})
}
