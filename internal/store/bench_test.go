package store

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testredis"
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
