package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// failSet fails the first SET of key a client sends, without sending it: the store failing
// between two writes.
type failSet struct {
	key    string
	mu     sync.Mutex
	failed bool
}

func (f *failSet) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f *failSet) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		f.mu.Lock()
		hit := !f.failed && cmd.Name() == "set" && len(cmd.Args()) > 1 && cmd.Args()[1] == f.key
		f.failed = f.failed || hit
		f.mu.Unlock()
		if hit {
			err := errors.New("injected: the store failed before this write")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (f *failSet) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestClusterClaimInterruptedBetweenItsWrites: a Redis Cluster keeps a claim's two records in
// different hash slots and writes them one after the other (the owner's id, then the
// single-use key). When the store fails between the two, the claim is refused (503, retry
// invited), and the retry must be the first use, at no further cost to the owner's budget:
// before the fix it found the id recorded and was refused as a replay of a use that never was.
// After it, the state is consumed: a replay, another owner's claim and a claim of the same id
// for another single-use key are refused. An id recorded by a replica of the previous release
// (FirstUse with its call's own token, then a failure) is still refused: only this release's
// claims are recognised.
func TestClusterClaimInterruptedBetweenItsWrites(t *testing.T) {
	ctx := context.Background()
	srv := testredis.Start(t, testredis.WithCluster())
	r := newRedisStore(t, RedisConfig{Addrs: []string{srv.Addr()}, Cluster: true})
	raw := rawClient(t, srv)
	const ttl = time.Minute
	b := ReplayBudget{Count: 10, Window: time.Minute}
	r.client.AddHook(&failSet{key: redisKey(DefaultKeyPrefix, kindOnce, "state")})
	if u, err := r.FirstUseOnce(ctx, "alice", "state", "state", ttl, b); err == nil {
		t.Fatalf("the claim the store failed in answered %v, want an error", u)
	}
	id, _ := raw.Exists(ctx, replayKeys(DefaultKeyPrefix, "alice", "state")[0]).Result()
	once, _ := raw.Exists(ctx, redisKey(DefaultKeyPrefix, kindOnce, "state")).Result()
	if id != 1 || once != 0 {
		t.Fatalf("after the failure: id recorded %d, single-use key %d; want the failure between the two", id, once)
	}
	for i, step := range []struct {
		owner, id, once string
		want            Use
	}{
		{"alice", "state", "state", UseFirst}, // the retry
		{"alice", "state", "state", UseAgain},
		{"bob", "state", "state", UseAgain},
		{"alice", "state", "another", UseAgain},
	} {
		if u, err := r.FirstUseOnce(ctx, step.owner, step.id, step.once, ttl, b); u != step.want || err != nil {
			t.Errorf("claim %d (%s, %s, %s) = %v, %v; want %v", i, step.owner, step.id, step.once, u, err, step.want)
		}
	}
	if n, err := raw.Get(ctx, replayOwnerTag(DefaultKeyPrefix, "alice")).Result(); err != nil || n != "1" {
		t.Errorf("alice's budget counts %q (%v), want 1: the failed claim and its retry are one use", n, err)
	}
	if u, err := r.FirstUse(ctx, "carol", "old", ttl, b); u != UseFirst || err != nil {
		t.Fatal(u, err)
	}
	if u, err := r.FirstUseOnce(ctx, "carol", "old", "old", ttl, b); u != UseAgain || err != nil {
		t.Errorf("a claim of an id the previous release recorded = %v, %v; want UseAgain", u, err)
	}
}
