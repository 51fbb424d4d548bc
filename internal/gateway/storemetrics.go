package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/metrics"
)

// countedStore counts the shared store's failures in mcp_gateway_redis_errors_total by
// operation, so a Redis outage shows on the dashboard and fires its alert.
type countedStore struct {
	store.Store
	rec *metrics.Recorder
}

func (c countedStore) count(op string, err error) {
	if errors.Is(err, store.ErrUnavailable) {
		c.rec.RedisError(op)
	}
}

func (c countedStore) UseOnce(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	first, err := c.Store.UseOnce(ctx, key, ttl)
	c.count(metrics.RedisOpNonce, err)
	return first, err
}

func (c countedStore) Allow(ctx context.Context, key string, l store.Limit) (store.RateDecision, error) {
	d, err := c.Store.Allow(ctx, key, l)
	c.count(metrics.RedisOpRateLimit, err)
	return d, err
}

// countedReplay counts the replay store's failures (DPoP proofs' jti, answered rounds) as
// single-use nonces.
type countedReplay struct {
	store.ReplayOnce
	rec *metrics.Recorder
}

func (c countedReplay) FirstUse(ctx context.Context, owner, id string, ttl time.Duration, b store.ReplayBudget) (store.Use, error) {
	u, err := c.ReplayOnce.FirstUse(ctx, owner, id, ttl, b)
	c.count(err)
	return u, err
}

func (c countedReplay) FirstUseOnce(ctx context.Context, owner, id, once string, ttl time.Duration, b store.ReplayBudget) (store.Use, error) {
	u, err := c.ReplayOnce.FirstUseOnce(ctx, owner, id, once, ttl, b)
	c.count(err)
	return u, err
}

func (c countedReplay) count(err error) {
	if errors.Is(err, store.ErrUnavailable) {
		c.rec.RedisError(metrics.RedisOpNonce)
	}
}

// countedLeaser is countedStore for a store that also leases rate-limit tokens (Redis).
type countedLeaser struct {
	countedStore
	leaser store.Leaser
}

// Lease implements store.Leaser, counting failures like Allow.
func (c countedLeaser) Lease(ctx context.Context, key string, l store.Limit, want, refund int) (int, store.RateDecision, error) {
	n, d, err := c.leaser.Lease(ctx, key, l, want, refund)
	c.count(metrics.RedisOpRateLimit, err)
	return n, d, err
}

func (c countedStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, ok, err := c.Store.Get(ctx, key)
	c.count(metrics.RedisOpCacheGet, err)
	return v, ok, err
}

func (c countedStore) Set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	err := c.Store.Set(ctx, key, v, ttl)
	c.count(metrics.RedisOpCacheSet, err)
	return err
}

func (c countedStore) Ping(ctx context.Context) error {
	err := c.Store.Ping(ctx)
	c.count(metrics.RedisOpPing, err)
	return err
}

// Metrics of the Redis store's circuit breaker (see store.RedisBreaker).
const (
	nameRedisCircuitState = "mcp_gateway_redis_circuit_state"
	nameRedisSkipped      = "mcp_gateway_redis_skipped_total"
)

// registerBreakerMetrics exports the breaker's state (0 closed, 1 half-open, 2 open, as for
// backends' circuits) and how many operations it answered without asking Redis. Skipped
// operations are also counted in mcp_gateway_redis_errors_total, so its alert keeps firing
// while the breaker is open.
func registerBreakerMetrics(reg prometheus.Registerer, r *store.Redis) error {
	if err := reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: nameRedisCircuitState,
		Help: "State of the circuit breaker in front of Redis: 0 closed, 1 half-open, 2 open.",
	}, func() float64 { return float64(r.BreakerState()) })); err != nil {
		return err
	}
	return reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: nameRedisSkipped,
		Help: "Shared-store operations answered as unavailable without asking Redis, while its circuit breaker was open.",
	}, func() float64 { return float64(r.Skipped()) }))
}

// nameStoreFull counts writes the in-memory store refused because the pool of their kind was
// full of live entries: confirmations then fail closed, rate limits follow rateLimit.failClosed.
const nameStoreFull = "mcp_gateway_store_full_total"

// registerFullMetrics exports the in-memory store's refused writes by kind (nonce, rate_limit,
// value).
func registerFullMetrics(reg prometheus.Registerer, m *store.Memory) error {
	for _, k := range []struct {
		kind string
		get  func() uint64
	}{
		{"nonce", func() uint64 { n, _, _ := m.FullErrors(); return n }},
		{"rate_limit", func() uint64 { _, b, _ := m.FullErrors(); return b }},
		{"value", func() uint64 { _, _, v := m.FullErrors(); return v }},
	} {
		if err := reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        nameStoreFull,
			Help:        "Writes the in-memory store refused because the pool of their kind was full.",
			ConstLabels: prometheus.Labels{"kind": k.kind},
		}, func() float64 { return float64(k.get()) })); err != nil {
			return err
		}
	}
	return nil
}
