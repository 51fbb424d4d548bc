package store

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// stallOnce stalls a real redis-server (SIGSTOP) just before the first command matching match
// is sent, and resumes it when the client dials for that command's retry: the command's first
// attempt times out, its retry is answered, and Redis, once it wakes, has run both. With a
// pool of one connection the retry always dials.
type stallOnce struct {
	srv   *testredis.Server
	mu    sync.Mutex
	match func(redis.Cmder) bool
	state int // 0 armed, 1 paused, 2 done
}

func (s *stallOnce) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		s.mu.Lock()
		if s.state == 1 {
			s.state = 2
			s.srv.Resume()
		}
		s.mu.Unlock()
		return next(ctx, network, addr)
	}
}

func (s *stallOnce) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.mu.Lock()
		if s.state == 0 && s.match != nil && s.match(cmd) {
			s.state = 1
			s.srv.Pause()
		}
		s.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (s *stallOnce) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		s.mu.Lock()
		if s.state == 0 && s.match != nil && slices.ContainsFunc(cmds, s.match) {
			s.state = 1
			s.srv.Pause()
		}
		s.mu.Unlock()
		return next(ctx, cmds)
	}
}

// arm makes the next command match matches stall; stalled reports whether it did and was
// resumed by the retry's dial.
func (s *stallOnce) arm(match func(redis.Cmder) bool) (stalled func() bool) {
	s.mu.Lock()
	s.state, s.match = 0, match
	s.mu.Unlock()
	return func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.state == 2
	}
}

// runs matches a command running script (EVALSHA or EVAL of it).
func runs(script *redis.Script) func(redis.Cmder) bool {
	return func(c redis.Cmder) bool {
		a := c.Args()
		switch c.Name() {
		case "evalsha":
			return len(a) > 1 && a[1] == script.Hash()
		case "eval":
			return true
		}
		return false
	}
}

func named(name string) func(redis.Cmder) bool {
	return func(c redis.Cmder) bool { return c.Name() == name }
}

// TestWriteSurvivesARetriedStall: a Redis that stalls (paused, a slow fork or script, DEBUG
// SLEEP) longer than the read timeout makes go-redis give up on a command it has already
// written and send it again on a new connection; once Redis wakes it runs both. Each write
// that is not idempotent as sent must still answer what its one effect was:
//   - a single-use write (confirmations, DPoP proofs) answered UseAgain, refusing as a replay a
//     use that never reached anyone, and the record left refused the client's retry too;
//   - a vault record's compare-and-swap (a refresh storing rotated tokens) answered "changed
//     meanwhile", and the refresh then revoked the tokens the record now holds;
//   - an add-if-absent (a first connect) answered ErrRecordExists for its own record.
//
// A second use afterwards is still refused, and a swap from a stale value still fails.
func TestWriteSurvivesARetriedStall(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), PoolSize: 1, MaxRetries: 1,
		ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond,
		Breaker: RedisBreaker{Failures: -1}})
	stall := &stallOnce{srv: srv}
	r.client.AddHook(stall)
	ctx := context.Background()
	life := RecordLife{Now: time.Now(), Idle: time.Hour, Absolute: 2 * time.Hour}
	recBudget := Budget{Count: 10, Bytes: 1 << 10}
	cases := append(singleUseStallCases(r), []stallCase{
		{"AddRecord", runs(r.recPut), func(key, w string) (bool, error) {
			stored, err := r.AddRecord(ctx, "alice", key, []byte(w+" "+key), recBudget, life)
			if errors.Is(err, ErrRecordExists) {
				return false, nil
			}
			return stored, err
		}},
		{"SetNX", named("set"), func(key, w string) (bool, error) {
			stored, _, err := r.SetNX(ctx, key, []byte(w+" "+key), time.Minute)
			return stored, err
		}},
		{"DeleteRecord", runs(r.recDelete), func(key, w string) (bool, error) {
			// The record holds "v0 key" before the first removal: another writer's removal
			// of the value it read finds nothing.
			return r.DeleteRecord(ctx, "alice", key, []byte("v0 "+key))
		}},
		{"SwapRecord", runs(r.recSwap), func(key, w string) (bool, error) {
			// The record holds "v0 key" before the first swap: another writer's swap from
			// the same old value finds the first's value and must fail.
			return r.SwapRecord(ctx, "alice", key, []byte("v0 "+key), []byte(w+" "+key), life)
		}},
	}...)
	for _, key := range []string{"warm-SwapRecord", "stalled-SwapRecord", "warm-DeleteRecord", "stalled-DeleteRecord"} {
		if stored, err := r.PutRecord(ctx, "alice", key, []byte("v0 "+key), recBudget, life); err != nil || !stored {
			t.Fatalf("PutRecord: %v %v", stored, err)
		}
	}
	runStallCases(t, stall, cases)
}

// TestAckedWriteSurvivesARetriedStall: the same with RedisConfig.WaitReplicas, where each
// single-use write and its WAIT go as one pipeline, which go-redis sends again as a whole.
func TestAckedWriteSurvivesARetriedStall(t *testing.T) {
	primary, _ := startReplicaPair(t)
	r := newRedisStore(t, RedisConfig{URL: primary.URL(), PoolSize: 1, MaxRetries: 1,
		// WAIT's bound is generous: under -race on a loaded machine a replica's
		// acknowledgement took longer than 200 ms; the read timeout stays above it.
		ReadTimeout: 1500 * time.Millisecond, WriteTimeout: 1500 * time.Millisecond,
		WaitReplicas: 1, WaitTimeout: time.Second, Breaker: RedisBreaker{Failures: -1}})
	stall := &stallOnce{srv: primary}
	r.client.AddHook(stall)
	runStallCases(t, stall, singleUseStallCases(r))
}

// stallCase is one write of TestWriteSurvivesARetriedStall.
type stallCase struct {
	name  string
	match func(redis.Cmder) bool
	// do writes under key as writer w; first reports the one effect the write had, or must
	// have had. Another writer's value differs (a record) or not (a single use).
	do func(key, w string) (first bool, err error)
}

// singleUseStallCases are r's single-use writes.
func singleUseStallCases(r *Redis) []stallCase {
	ctx := context.Background()
	b := ReplayBudget{Count: 100, Window: time.Minute}
	const ttl = time.Minute
	return []stallCase{
		{"UseOnce", named("set"), func(key, _ string) (bool, error) { return r.UseOnce(ctx, key, ttl) }},
		{"FirstUse", runs(r.replay), func(key, _ string) (bool, error) {
			u, err := r.FirstUse(ctx, "alice", key, ttl, b)
			return u == UseFirst, err
		}},
		{"FirstUseGet", runs(r.replayGet), func(key, _ string) (bool, error) {
			u, _, _, err := r.FirstUseGet(ctx, "alice", key, ttl, b, "marker")
			return u == UseFirst, err
		}},
		{"FirstUseOnce", runs(r.replayOnce), func(key, _ string) (bool, error) {
			u, err := r.FirstUseOnce(ctx, "alice", key, "once-"+key, ttl, b)
			return u == UseFirst, err
		}},
	}
}

// runStallCases runs each case's write once with Redis answering, once stalled and retried,
// and once more as another writer.
func runStallCases(t *testing.T, stall *stallOnce, cases []stallCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Warm: the scripts are in Redis's cache, so the stalled command is the write.
			if first, err := tc.do("warm-"+tc.name, "first"); err != nil || !first {
				t.Fatalf("warm-up: first=%v err=%v", first, err)
			}
			stalled := stall.arm(tc.match)
			first, err := tc.do("stalled-"+tc.name, "first")
			if !stalled() {
				t.Fatalf("Redis was not stalled and resumed by a retry (err %v)", err)
			}
			if err != nil {
				t.Fatalf("the retry after the stall failed: %v", err)
			}
			if !first {
				t.Errorf("a write retried by the client after a stall was answered as if another had come first")
			}
			if again, err := tc.do("stalled-"+tc.name, "second"); err != nil || again {
				t.Errorf("another write after the stall: first=%v err=%v, want refused", again, err)
			}
		})
	}
}
