package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// startReplicaPair starts a primary and a replica of it on loopback and waits until the
// replication link is up.
func startReplicaPair(t *testing.T) (primary, replica *testredis.Server) {
	t.Helper()
	primary = testredis.Start(t)
	_, port, _ := strings.Cut(primary.Addr(), ":")
	replica = testredis.Start(t, testredis.WithArgs("--replicaof", "127.0.0.1", port))
	waitReplication(t, primary, 1)
	return primary, replica
}

// waitReplication polls the primary until n replicas are connected and in sync, bounded.
func waitReplication(t *testing.T, primary *testredis.Server, n int) {
	t.Helper()
	var info string
	for range 500 {
		info, _ = primary.Do("INFO", "replication")
		if strings.Contains(info, "connected_slaves:"+strconv.Itoa(n)) && strings.Contains(info, "state=online") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("replication not up: %s", info)
}

// promote makes s a primary, as a failover does.
func promote(t *testing.T, s *testredis.Server) {
	t.Helper()
	if _, err := s.Do("REPLICAOF", "NO", "ONE"); err != nil {
		t.Fatal(err)
	}
}

// TestWaitReplicasSurvivesFailover: with waitReplicas a consumed single-use key is on the
// replica before UseOnce reports a first use, so promoting the replica keeps it consumed;
// and a write the replica did not acknowledge (here: a replica cut off from its primary, the
// state of an asynchronous replica that missed the latest writes) is refused rather than
// reported as a first use that the promoted replica would accept again.
func TestWaitReplicasSurvivesFailover(t *testing.T) {
	t.Parallel() // its own redis-server; it waits on expiries and timeouts, not on a core
	ctx := context.Background()
	t.Run("acknowledged use survives promotion", func(t *testing.T) {
		primary, replica := startReplicaPair(t)
		// Generous bounds: a busy machine can take longer than the default 250 ms for the
		// replica's acknowledgement, and this case is about what an acknowledged use keeps.
		r := newRedisStore(t, RedisConfig{URL: primary.URL(), WaitReplicas: 1,
			WaitTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second})
		if first, err := r.UseOnce(ctx, "nonce", time.Minute); !first || err != nil {
			t.Fatalf("first use with the replica up = %v, %v; want true", first, err)
		}
		primary.Stop()
		promote(t, replica)
		after := newRedisStore(t, RedisConfig{URL: replica.URL()})
		if first, err := after.UseOnce(ctx, "nonce", time.Minute); first || err != nil {
			t.Fatalf("replay on the promoted replica = %v, %v; want refused (false)", first, err)
		}
	})
	t.Run("unacknowledged use is refused, not replayable", func(t *testing.T) {
		primary, replica := startReplicaPair(t)
		r := newRedisStore(t, RedisConfig{URL: primary.URL(), WaitReplicas: 1, WaitTimeout: 100 * time.Millisecond})
		// The replica stops following its primary: it will miss the next write.
		promote(t, replica)
		first, err := r.UseOnce(ctx, "nonce", time.Minute)
		if first || !errors.Is(err, ErrNotReplicated) || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("use the replica did not acknowledge = %v, %v; want refused with ErrNotReplicated", first, err)
		}
		b := ReplayBudget{Count: 10, Window: time.Minute}
		if u, err := r.FirstUseOnce(ctx, "alice", "state", "state", time.Minute, b); !errors.Is(err, ErrNotReplicated) {
			t.Fatalf("claim the replica did not acknowledge = %v, %v; want refused with ErrNotReplicated", u, err)
		}
		// The refused use did not burn the nonce on the primary: once a replica follows
		// again, the user's retry goes through, exactly once.
		_, port, _ := strings.Cut(primary.Addr(), ":")
		if _, err := replica.Do("REPLICAOF", "127.0.0.1", port); err != nil {
			t.Fatal(err)
		}
		waitReplication(t, primary, 1)
		// The retry waits long enough for a busy machine's acknowledgement.
		r = newRedisStore(t, RedisConfig{URL: primary.URL(), WaitReplicas: 1,
			WaitTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second})
		if first, err := r.UseOnce(ctx, "nonce", time.Minute); !first || err != nil {
			t.Fatalf("retry with the replica back = %v, %v; want the first use", first, err)
		}
		if first, err := r.UseOnce(ctx, "nonce", time.Minute); first || err != nil {
			t.Fatalf("replay = %v, %v; want refused", first, err)
		}
		// Both of the refused claim's records were taken back: its retry is first, once.
		for _, want := range []Use{UseFirst, UseAgain} {
			if u, err := r.FirstUseOnce(ctx, "alice", "state", "state", time.Minute, b); u != want || err != nil {
				t.Fatalf("claim's retry with the replica back = %v, %v; want %v", u, err, want)
			}
		}
	})
	t.Run("without waitReplicas the gap is real", func(t *testing.T) {
		// Documents what waitReplicas closes: the same sequence without it reports a first
		// use that a promoted replica accepts again.
		primary, replica := startReplicaPair(t)
		r := newRedisStore(t, RedisConfig{URL: primary.URL()})
		promote(t, replica)
		if first, err := r.UseOnce(ctx, "nonce", time.Minute); !first || err != nil {
			t.Fatalf("first use = %v, %v", first, err)
		}
		after := newRedisStore(t, RedisConfig{URL: replica.URL()})
		if first, err := after.UseOnce(ctx, "nonce", time.Minute); !first || err != nil {
			t.Fatalf("the promoted replica refused the nonce (%v, %v): the gap this test documents is gone", first, err)
		}
	})
}

func TestWaitReplicasCluster(t *testing.T) {
	t.Parallel() // its own redis-server; it waits on expiries and timeouts, not on a core
	// A one-node Cluster has no replicas: every acknowledged use must be refused, proving WAIT
	// runs on the key's node in the same pipeline as the write.
	srv := testredis.Start(t, testredis.WithCluster())
	r := newRedisStore(t, RedisConfig{Addrs: []string{srv.Addr()}, Cluster: true, WaitReplicas: 1,
		WaitTimeout: 50 * time.Millisecond})
	if first, err := r.UseOnce(context.Background(), "nonce", time.Minute); first || !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("UseOnce on a Cluster without replicas = %v, %v; want ErrNotReplicated", first, err)
	}
}

func TestWaitReplicasValidated(t *testing.T) {
	for _, c := range []RedisConfig{
		{WaitReplicas: -1},
		{WaitReplicas: MaxWaitReplicas + 1},
		{WaitReplicas: 1, WaitTimeout: -time.Second},
		{WaitReplicas: 1, WaitTimeout: time.Second}, // not shorter than the default readTimeout
		{WaitReplicas: 1, WaitTimeout: 500 * time.Millisecond, ReadTimeout: 400 * time.Millisecond},
	} {
		c.URL = "redis://127.0.0.1:6379"
		if err := c.Validate(); err == nil {
			t.Errorf("Validate accepted %+v", c)
		}
	}
}

// TestWaitReplicasACL: with the documented rules plus +wait, waitReplicas works for the
// least-privilege user; without +wait the use fails closed and the key it wrote is released,
// so no confirmation is burnt by a refusal.
func TestWaitReplicasACL(t *testing.T) {
	t.Parallel() // its own redis-server; it waits on expiries and timeouts, not on a core
	primary, _ := startReplicaPair(t)
	ctx := context.Background()
	for _, tt := range []struct {
		user, rules string
		ok          bool
	}{
		{"gw", leastPrivilege + " +wait", true},
		{"nowait", leastPrivilege, false},
	} {
		args := append([]string{"ACL", "SETUSER", tt.user, "on", ">pw"}, strings.Fields(tt.rules)...)
		if _, err := primary.Do(args...); err != nil {
			t.Fatal(err)
		}
		r := newRedisStore(t, RedisConfig{URL: primary.URL(), Username: tt.user, Password: "pw", WaitReplicas: 1,
			WaitTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second})
		first, err := r.UseOnce(ctx, "nonce-"+tt.user, time.Minute)
		if tt.ok != (first && err == nil) {
			t.Fatalf("%s: UseOnce = %v, %v; want ok=%v", tt.user, first, err, tt.ok)
		}
		if !tt.ok {
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("%s: err = %v, want ErrUnavailable", tt.user, err)
			}
			if n, err := primary.Do("EXISTS", redisKey(DefaultKeyPrefix, kindOnce, "nonce-"+tt.user)); err != nil || n != "0" {
				t.Fatalf("%s: the refused use left its key behind (EXISTS %s, %v)", tt.user, n, err)
			}
		}
	}
}
