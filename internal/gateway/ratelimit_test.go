package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/store"
)

// leasingStore is a memory store that also offers leases, standing in for Redis.
type leasingStore struct {
	*store.Memory
}

func (leasingStore) Lease(context.Context, string, store.Limit, int, int) (int, store.RateDecision, error) {
	return 1, store.RateDecision{Allowed: true}, nil
}

// TestCompileRateLimitsLease: a store that leases is spent through store.Leased unless
// rateLimit.lease is 1; one that does not (memory) is used as it is; out-of-range values fail.
func TestCompileRateLimitsLease(t *testing.T) {
	mem, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	leasing := leasingStore{mem}
	for _, tt := range []struct {
		name   string
		st     store.Store
		lease  int
		leased bool
		errSub string
	}{
		{name: "redis-like default", st: leasing, leased: true},
		{name: "redis-like lease 32", st: leasing, lease: 32, leased: true},
		{name: "redis-like exact", st: leasing, lease: 1},
		{name: "memory", st: mem},
		{name: "negative", st: leasing, lease: -1, errSub: "rateLimit.lease"},
		{name: "too large", st: leasing, lease: store.MaxLeaseMax + 1, errSub: "rateLimit.lease"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{RateLimit: RateLimitConfig{PerCaller: "600/m burst 100", Lease: tt.lease}}
			rl, err := c.compileRateLimits(tt.st, nil)
			if tt.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("err = %v, want one naming %s", err, tt.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := rl.Store.(*store.Leased); ok != tt.leased {
				t.Fatalf("limiter %T, leased = %v, want %v", rl.Store, ok, tt.leased)
			}
		})
	}
}
