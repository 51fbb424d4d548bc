package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/store"
)

// RedisConfig is the `redis:` block: store.RedisConfig with its passwords given as secrets.
// An empty url and no addrs select the in-memory store, correct for one replica only.
type RedisConfig struct {
	store.RedisConfig `yaml:",inline"`
	// Password authenticates to Redis (file, env or value).
	Password Secret `yaml:"password"`
	// SentinelPassword authenticates to the Sentinels (file, env or value).
	SentinelPassword Secret `yaml:"sentinelPassword"`
}

func (c RedisConfig) enabled() bool { return c.URL != "" || len(c.Addrs) > 0 }

// where names the Redis configured, for an operator: its URL without user information or query
// values (configerr.URL), or its seeds.
func (c RedisConfig) where() string {
	if c.URL != "" {
		return configerr.URL(c.URL)
	}
	return strings.Join(c.Addrs, ",")
}

func (c RedisConfig) validate() []error {
	if !c.enabled() {
		return nil
	}
	return configerr.Under("redis", nil, c.RedisConfig.Validate())
}

// newStore returns the shared store: Redis when configured, else the in-memory one. With Redis
// the state of its circuit breaker is logged on every change and exported on reg.
func (c RedisConfig) newStore(getenv func(string) string, log *slog.Logger, reg prometheus.Registerer) (store.Store, error) {
	if !c.enabled() {
		m, err := store.NewMemory(store.MemoryOptions{})
		if err != nil {
			return nil, err
		}
		return m, registerFullMetrics(reg, m)
	}
	rc := c.RedisConfig
	for _, p := range []struct {
		dst *string
		s   Secret
	}{{&rc.Password, c.Password}, {&rc.SentinelPassword, c.SentinelPassword}} {
		if p.s.IsZero() {
			continue
		}
		v, err := p.s.resolve(getenv)
		if err != nil {
			return nil, fmt.Errorf("redis password: %w", err)
		}
		*p.dst = v
	}
	r, err := store.NewRedis(rc, store.WithBreakerHook(func(s store.BreakerState) {
		// Runs under the breaker's lock: slog hands the record to the log writer's queue.
		if s == store.BreakerClosed {
			log.Info("redis answers again; circuit breaker closed", "state", s.String())
			return
		}
		log.Warn("redis failing; circuit breaker skips it, rate limits follow rateLimit.failClosed and confirmations are refused",
			"state", s.String())
	}))
	if err != nil {
		return nil, err
	}
	if err := registerBreakerMetrics(reg, r); err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

// redisLog routes go-redis's own messages (dial failures, pool events) into the gateway's
// structured log at WARN instead of its default writer, stderr.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client", "message", fmt.Sprintf(format, v...))
}

// useRedisLogger installs l as go-redis's logger. go-redis has only a process-wide logger, so
// this is the one piece of global state the gateway sets, once, from main's goroutine.
func useRedisLogger(l *slog.Logger) { redis.SetLogger(redisLog{l}) }
