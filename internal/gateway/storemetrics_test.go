package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/metrics"
)

// TestCountedStore: every failed store operation is counted under its operation label.
func TestCountedStore(t *testing.T) {
	reg := prometheus.NewRegistry()
	rec, err := metrics.New(reg, metrics.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := countedStore{Store: mem, rec: rec}
	ctx := context.Background()
	if _, err := s.UseOnce(ctx, "k", time.Minute); err != nil {
		t.Fatal(err) // a working store counts nothing
	}
	_ = mem.Close() // a closed store answers ErrUnavailable, like an unreachable Redis
	_, _ = s.UseOnce(ctx, "k2", time.Minute)
	_, _ = s.Allow(ctx, "k", store.Limit{Rate: 1, Period: time.Second, Burst: 1})
	_, _, _ = s.Get(ctx, "k")
	_ = s.Set(ctx, "k", []byte("v"), time.Minute)
	_ = s.Ping(ctx)
	// A consumed state's claim (the answers' record and its single-use key in one step) is a
	// nonce operation too.
	_, _ = countedReplay{ReplayOnce: mem, rec: rec}.FirstUseOnce(ctx, "o", "k3", "k3", time.Minute, store.ReplayBudget{Count: 1, Window: time.Minute})
	want := `# HELP mcp_gateway_redis_errors_total HELP
# TYPE mcp_gateway_redis_errors_total counter
`
	for _, op := range []string{metrics.RedisOpCacheGet, metrics.RedisOpCacheSet, metrics.RedisOpNonce, metrics.RedisOpNotice, metrics.RedisOpPing, metrics.RedisOpRateLimit} {
		n := "1"
		switch op {
		case metrics.RedisOpNotice: // not a store operation: exported from start at 0
			n = "0"
		case metrics.RedisOpNonce: // UseOnce and FirstUseOnce
			n = "2"
		}
		want += `mcp_gateway_redis_errors_total{op="` + op + `"} ` + n + "\n"
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == metrics.NameRedisErrors {
			want = strings.Replace(want, "HELP\n", mf.GetHelp()+"\n", 1)
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), metrics.NameRedisErrors); err != nil {
		t.Error(err)
	}
}

// TestStoreFullMetrics: the in-memory store's refused writes are exported by kind.
func TestStoreFullMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := store.NewMemory(store.MemoryOptions{MaxNonces: 1, MaxRateEntries: 1, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := registerFullMetrics(reg, m); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l := store.Limit{Rate: 1, Period: time.Minute}
	_, _ = m.Allow(ctx, "a", l)
	_, _ = m.Allow(ctx, "b", l) // refused: the bucket pool is full
	_, _ = m.UseOnce(ctx, "n", time.Minute)
	want := `# HELP mcp_gateway_store_full_total Writes the in-memory store refused because the pool of their kind was full.
# TYPE mcp_gateway_store_full_total counter
mcp_gateway_store_full_total{kind="nonce"} 0
mcp_gateway_store_full_total{kind="rate_limit"} 1
mcp_gateway_store_full_total{kind="value"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), nameStoreFull); err != nil {
		t.Error(err)
	}
}
