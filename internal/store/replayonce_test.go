package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// contractReplayOnce: FirstUseOnce records the owner's id and the single-use key together or not
// at all. Either record refuses a later claim (both protections against replay hold), a claim
// refused for the budget or as a replay records nothing, and among concurrent claims of one key
// by different owners exactly one is first.
func contractReplayOnce(t *testing.T, h harness) {
	ctx := context.Background()
	r, ok := h.store.(ReplayOnce)
	if !ok {
		t.Fatalf("%T does not implement ReplayOnce", h.store)
	}
	const ttl = time.Minute
	b := ReplayBudget{Count: 2, Window: time.Minute}
	claim := func(owner, key string) (Use, error) { return r.FirstUseOnce(ctx, owner, key, key, ttl, b) }
	// A Redis Cluster claims in two steps (FirstUse, then UseOnce: the keys lie in different
	// slots), where a claim refused by the single-use key has counted and recorded the owner's
	// id: the steps that tell the two apart run on the atomic stores only.
	_, split := h.store.(*Redis)
	split = split && h.store.(*Redis).cluster()
	steps := []replayStep{
		{"alice", "s1", 0, UseFirst},
		{"alice", "s1", 0, UseAgain}, // the owner's record
		{"bob", "s1", 0, UseAgain},   // the single-use key, whoever claims it
		{"bob", "s2", 0, UseFirst},
		{"alice", "s2", 0, UseAgain},
		// Atomic stores only, from here:
		{"alice", "s3", 0, UseFirst}, // alice's replay of s2 cost her nothing
		{"alice", "s4", 0, UseOverBudget},
		{"bob", "s4", 0, UseFirst}, // refused for alice's budget, s4 was not recorded
	}
	if split {
		steps = steps[:5]
	}
	runReplaySteps(t, h, "FirstUseOnce", claim, steps, nil)
	// A key made single-use on its own (UseOnce, as a replica of an earlier version does) is
	// refused, and the refusal records nothing for the owner.
	if first, err := h.store.UseOnce(ctx, "s5", ttl); err != nil || !first {
		t.Fatalf("UseOnce(s5) = %v, %v", first, err)
	}
	if got, err := claim("carol", "s5"); err != nil || got != UseAgain {
		t.Fatalf("FirstUseOnce of a key already used once = %v, %v; want UseAgain", got, err)
	}
	if u, err := r.FirstUse(ctx, "carol", "s5", ttl, b); !split && (err != nil || u != UseFirst) {
		t.Fatalf("carol's id after a refused claim = %v, %v; want UseFirst (nothing recorded)", u, err)
	}
	// The other way round: an owner's id recorded on its own refuses the claim, and the
	// single-use key stays free.
	if _, err := r.FirstUse(ctx, "dave", "s7", ttl, b); err != nil {
		t.Fatal(err)
	}
	if got, err := claim("dave", "s7"); err != nil || got != UseAgain {
		t.Fatalf("FirstUseOnce of an id already recorded = %v, %v; want UseAgain", got, err)
	}
	if first, err := h.store.UseOnce(ctx, "s7", ttl); err != nil || !first {
		t.Fatalf("UseOnce of the refused claim's key = %v, %v; want first (nothing recorded)", first, err)
	}
	if _, err := r.FirstUseOnce(ctx, "o", "k", "k", 0, b); !errors.Is(err, ErrInvalidTTL) {
		t.Errorf("FirstUseOnce with no ttl: %v, want ErrInvalidTTL", err)
	}

	uses := concurrentUses(t, 16, func(i int) (Use, error) {
		return r.FirstUseOnce(ctx, string(rune('A'+i)), "race", "race", ttl, b)
	})
	if uses[UseFirst] != 1 {
		t.Errorf("%d concurrent claims of one key were first, want exactly 1", uses[UseFirst])
	}
}

// TestRedisReplayOnceInterrupted: Redis stopped (paused, or gone and restarted) at the moment of
// a claim leaves the state whole, never half-consumed: after the failure the owner's id and the
// single-use key are both recorded or both absent, and a retry is then first exactly when
// neither was.
func TestRedisReplayOnceInterrupted(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), DialTimeout: 500 * time.Millisecond})
	raw := rawClient(t, srv)
	ctx := context.Background()
	b := ReplayBudget{Count: 100, Window: time.Minute}
	recorded := func(owner, key string) (id, once bool) {
		t.Helper()
		n, err := raw.Exists(ctx, replayKeys(DefaultKeyPrefix, owner, key)[0]).Result()
		if err != nil {
			t.Fatal(err)
		}
		m, err := raw.Exists(ctx, redisKey(DefaultKeyPrefix, kindOnce, key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n == 1, m == 1
	}
	for _, tt := range []struct {
		name          string
		fail, recover func()
		timeout       time.Duration
	}{
		{"paused", srv.Pause, srv.Resume, 200 * time.Millisecond},
		{"restarted", srv.Stop, srv.Restart, 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := "state-" + tt.name
			waitPing(t, r)
			tt.fail()
			cctx, cancel := context.WithTimeout(ctx, tt.timeout)
			_, err := r.FirstUseOnce(cctx, "alice", key, key, time.Minute, b)
			cancel()
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("claim with Redis %s: %v, want ErrUnavailable", tt.name, err)
			}
			tt.recover()
			waitPing(t, r)
			id, once := recorded("alice", key)
			if id != once {
				t.Fatalf("after the failed claim: owner's id recorded %v, single-use key %v: half-consumed", id, once)
			}
			u, err := r.FirstUseOnce(ctx, "alice", key, key, time.Minute, b)
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if want := map[bool]Use{false: UseFirst, true: UseAgain}[id]; u != want {
				t.Fatalf("retry after a failed claim (recorded: %v) = %v, want %v", id, u, want)
			}
			if id, once := recorded("alice", key); !id || !once {
				t.Fatalf("after the retry: owner's id %v, single-use key %v; want both", id, once)
			}
		})
	}
}
