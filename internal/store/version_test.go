package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestRedisCheckVersion: a real redis-server (7.0 or later, as CI installs) passes, alone and as
// a Cluster; the same server announcing itself as 6.x through a relay that rewrites only the
// version in its answers is refused with an OldVersionError naming that version, and the refusal
// does not count against the circuit breaker (the server answered).
func TestRedisCheckVersion(t *testing.T) {
	ctx := context.Background()
	srv := testredis.Start(t)
	if err := newRedisStore(t, RedisConfig{URL: srv.URL()}).CheckVersion(ctx); err != nil {
		t.Errorf("CheckVersion on redis-server: %v", err)
	}
	cluster := testredis.Start(t, testredis.WithCluster())
	if err := newRedisStore(t, RedisConfig{Addrs: []string{cluster.Addr()}, Cluster: true}).CheckVersion(ctx); err != nil {
		t.Errorf("CheckVersion on a Cluster: %v", err)
	}

	addr, older := srv.OlderVersion(t)
	r := newRedisStore(t, RedisConfig{URL: "redis://" + addr})
	for range 3 * DefaultBreakerFailures {
		err := r.CheckVersion(ctx)
		var old *OldVersionError
		if !errors.As(err, &old) || old.Version != older {
			t.Fatalf("CheckVersion through a relay announcing %s: %v, want an OldVersionError naming it", older, err)
		}
	}
	if st := r.BreakerState(); st != BreakerClosed {
		t.Errorf("breaker %s after refusals of an old server, want closed", st)
	}
	if err := r.Set(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Errorf("a plain write through the relay: %v (the relay must pass everything else)", err)
	}
}

// TestVersionNewEnough: the version HELLO reports, in either protocol's shape, judged by its
// major and minor numbers.
func TestVersionNewEnough(t *testing.T) {
	for _, tc := range []struct {
		hello any
		ok    bool
	}{
		{map[any]any{"server": "redis", "version": "7.0.0"}, true},
		{map[any]any{"version": "7.2.4"}, true}, // Valkey reports the Redis version it matches
		{[]any{"server", "redis", "version", "8.0.1", "proto", int64(3)}, true},
		{map[any]any{"version": "10.0.0"}, true},
		{map[any]any{"version": "6.2.14"}, false},
		{[]any{"server", "redis", "version", "6.0.20"}, false},
		{map[any]any{"version": "6.9999"}, false},
		{map[any]any{"version": "x.y"}, false},
		{map[any]any{"server": "redis"}, false},
		{"OK", false},
	} {
		err := versionNewEnough(helloVersion(tc.hello))
		if (err == nil) != tc.ok {
			t.Errorf("HELLO %v: %v, want ok %v", tc.hello, err, tc.ok)
		}
	}
}
