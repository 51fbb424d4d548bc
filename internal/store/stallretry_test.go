package store

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// dialSignal tells, on dialed, each time the client opens a connection.
type dialSignal struct{ dialed chan struct{} }

func (h dialSignal) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		select {
		case h.dialed <- struct{}{}:
		default:
		}
		return next(ctx, network, addr)
	}
}

func (h dialSignal) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h dialSignal) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestSingleUseWriteSurvivesARetriedStall: a Redis that stalls (paused, a slow fork or script,
// DEBUG SLEEP) longer than the read timeout makes go-redis give up on a command it has already
// written and send it again on a new connection. When Redis wakes it runs both: the first
// records the use, the second finds it recorded. Each single-use write must still answer a first
// use as first: answering UseAgain refuses a confirmation or a DPoP proof as a replay of a use
// that never reached anyone, and the record left behind refuses the client's retry too. A second
// use afterwards is still refused.
//
// The stall is a real redis-server stopped with SIGSTOP; it resumes once the client dials for
// its retry, so that the retry (not a timeout) answers. The pool holds one connection, so the
// retry always dials.
func TestSingleUseWriteSurvivesARetriedStall(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), PoolSize: 1, MaxRetries: 1,
		ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond,
		Breaker: RedisBreaker{Failures: -1}})
	sig := dialSignal{dialed: make(chan struct{}, 1)}
	r.client.AddHook(sig)
	ctx := context.Background()
	b := ReplayBudget{Count: 100, Window: time.Minute}
	const ttl = time.Minute
	ops := []struct {
		name string
		use  func(key string) (bool, error)
	}{
		{"UseOnce", func(key string) (bool, error) { return r.UseOnce(ctx, key, ttl) }},
		{"FirstUse", func(key string) (bool, error) {
			u, err := r.FirstUse(ctx, "alice", key, ttl, b)
			return u == UseFirst, err
		}},
		{"FirstUseGet", func(key string) (bool, error) {
			u, _, _, err := r.FirstUseGet(ctx, "alice", key, ttl, b, "marker")
			return u == UseFirst, err
		}},
		{"FirstUseOnce", func(key string) (bool, error) {
			u, err := r.FirstUseOnce(ctx, "alice", key, "once-"+key, ttl, b)
			return u == UseFirst, err
		}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			// Warm: the scripts are in Redis's cache, so the stalled command is the write itself.
			if first, err := op.use("warm-" + op.name); err != nil || !first {
				t.Fatalf("warm-up: first=%v err=%v", first, err)
			}
			select {
			case <-sig.dialed:
			default:
			}
			key := "stalled-" + op.name
			type answer struct {
				first bool
				err   error
			}
			got := make(chan answer, 1)
			srv.Pause()
			go func() {
				first, err := op.use(key)
				got <- answer{first, err}
			}()
			select {
			case <-sig.dialed: // the first attempt timed out; the retry is on its way
			case a := <-got:
				srv.Resume()
				t.Fatalf("answered with Redis paused and no retry: %+v", a)
			}
			srv.Resume()
			a := <-got
			if a.err != nil {
				t.Fatalf("the retry after the stall failed: %v", a.err)
			}
			if !a.first {
				t.Errorf("a first use, retried by the client after a stall, was answered as a replay")
			}
			if again, err := op.use(key); err != nil || again {
				t.Errorf("a second use after the stall: first=%v err=%v, want refused", again, err)
			}
		})
	}
}
