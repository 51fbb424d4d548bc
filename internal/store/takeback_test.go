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

// lastCommand records the arguments of the last DEL or script a client sent on its own (not in
// a pipeline; not the HELLO of a new connection), so that a test can send exactly that command
// again, as go-redis does when its reply times out.
type lastCommand struct {
	mu   sync.Mutex
	args []any
}

func (l *lastCommand) DialHook(next redis.DialHook) redis.DialHook { return next }

func (l *lastCommand) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch cmd.Name() {
		case "del", "eval", "evalsha":
			l.mu.Lock()
			l.args = append([]any(nil), cmd.Args()...)
			l.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (l *lastCommand) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (l *lastCommand) last() []any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.args
}

// TestTakeBackSentAgainKeepsAnotherClaim: with waitReplicas, a use the replicas did not
// acknowledge is refused and its single-use keys are released, so that the user's retry goes
// through. When that release is sent again (its reply timed out) and the copy runs after another
// writer has claimed the released nonce, it must leave that claim alone: before the fix the
// release was a DEL, and its copy deleted the other writer's claim, so the nonce that writer had
// consumed was accepted once more. Each case refuses a use, lets another writer claim the nonce,
// sends the release's exact command again, and checks that the nonce stays used.
func TestTakeBackSentAgainKeepsAnotherClaim(t *testing.T) {
	srv := testredis.Start(t) // no replica: every acknowledged use is refused
	ctx := context.Background()
	acked := newRedisStore(t, RedisConfig{URL: srv.URL(), WaitReplicas: 1, WaitTimeout: 10 * time.Millisecond})
	sent := &lastCommand{}
	acked.client.AddHook(sent)
	other := newRedisStore(t, RedisConfig{URL: srv.URL()})
	raw := rawClient(t, srv)
	b := ReplayBudget{Count: 100, Window: time.Minute}
	for _, tc := range []struct {
		name string
		// use claims nonce as a writer through s; first reports a first use.
		use func(s *Redis, nonce string) (first bool, err error)
	}{
		{"UseOnce", func(s *Redis, nonce string) (bool, error) { return s.UseOnce(ctx, nonce, time.Minute) }},
		{"FirstUse", func(s *Redis, nonce string) (bool, error) {
			u, err := s.FirstUse(ctx, "alice", nonce, time.Minute, b)
			return u == UseFirst, err
		}},
		{"FirstUseOnce", func(s *Redis, nonce string) (bool, error) {
			u, err := s.FirstUseOnce(ctx, "alice", nonce, nonce, time.Minute, b)
			return u == UseFirst, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nonce := "nonce-" + tc.name
			if first, err := tc.use(acked, nonce); first || !errors.Is(err, ErrNotReplicated) {
				t.Fatalf("a use no replica acknowledged: first=%v err=%v, want ErrNotReplicated", first, err)
			}
			release := sent.last()
			if len(release) < 2 || release[0] != "eval" || release[1] != takeBackScript {
				t.Fatalf("the release sent was %v, want the take-back script", release)
			}
			if first, err := tc.use(other, nonce); !first || err != nil {
				t.Fatalf("another writer's use after the release: first=%v err=%v, want the first use", first, err)
			}
			// The release's copy, sent again, runs now.
			if err := raw.Do(ctx, release...).Err(); err != nil && !errors.Is(err, redis.Nil) {
				t.Fatalf("sending %v again: %v", release, err)
			}
			if first, err := tc.use(other, nonce); first || err != nil {
				t.Errorf("after the release was sent again the consumed nonce was accepted again (first=%v err=%v); the copy was %v",
					first, err, release)
			}
		})
	}
}
