package mrtr

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestConsumeStoreFailingMidClaimKeepsTheAnswer: a consume that the store fails part-way loses
// nothing. Here the gateway's Redis user may write the answers' records but not yet the
// single-use keys, so the store refuses one of the two records a consume writes, as a Redis
// going away between them would: the consume fails as unavailable (the client's 503 with
// Retry-After), and once the store takes the write the same state's retry is accepted, once,
// for any client. Consuming in two steps, the retry was refused as a replay: the person's
// answer was lost although nothing ran.
func TestConsumeStoreFailingMidClaimKeepsTheAnswer(t *testing.T) {
	srv := testredis.Start(t)
	grant := func(keys string) {
		t.Helper()
		if _, err := srv.Do("ACL", "SETUSER", "gw", "reset", "on", ">gw-secret", keys, "+@all"); err != nil {
			t.Fatalf("ACL SETUSER: %v", err)
		}
	}
	grant("~" + store.DefaultKeyPrefix + "replay:*")
	r, err := store.NewRedis(store.RedisConfig{URL: "redis://" + srv.Addr(), Username: "gw", Password: "gw-secret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	codec, err := New(testSealer(t, "k1"), Config{TTL: time.Minute, Answers: r}, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := testBinding(t)
	tok, err := codec.Seal(stateFor(b, KindConfirm))
	if err != nil {
		t.Fatal(err)
	}
	st, err := codec.Open(tok, b)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := codec.Consume(ctx, st); !errors.Is(err, ErrStoreUnavailable) {
		t.Fatalf("consume while the store refuses the single-use key: %v, want ErrStoreUnavailable", err)
	}
	grant("~" + store.DefaultKeyPrefix + "*")
	if err := codec.Consume(ctx, st); err != nil {
		t.Fatalf("the retry once the store is whole again: %v, want accepted", err)
	}
	if err := codec.Consume(ctx, st); Reason(err) != ReasonReplayed {
		t.Fatalf("a second retry: %v, want replayed", err)
	}
	if err := codec.ConsumeAs(ctx, st, "another client"); Reason(err) != ReasonReplayed {
		t.Fatalf("the state from another client: %v, want replayed", err)
	}
}

// TestConsumeInOneStepKeepsTheEpochGuard: consuming in one step of the store still asks the
// epoch guard first. A state consumed before Redis lost its memory (restarted without
// persistence) is refused as a replay afterwards, for its caller and for any client, and a
// state issued after the restart is consumed, once.
func TestConsumeInOneStepKeepsTheEpochGuard(t *testing.T) {
	srv := testredis.Start(t)
	r, err := store.NewRedis(store.RedisConfig{URL: srv.URL(), DialTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	// States carry their expiry in milliseconds: the clock steps a second between the
	// guard's marker and the states it judges, so none falls in the marker's millisecond.
	clock := mcptest.NewClock(time.Now())
	guard := GuardEpoch(r, time.Minute, clock.Now)
	ctx := context.Background()
	if err := guard.Prime(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	codec, err := New(testSealer(t, "k1"), Config{TTL: time.Minute, Answers: r}, guard, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	b := testBinding(t)
	open := func() *State {
		t.Helper()
		tok, err := codec.Seal(stateFor(b, KindConfirm))
		if err != nil {
			t.Fatal(err)
		}
		st, err := codec.Open(tok, b)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	used := open()
	if err := codec.Consume(ctx, used); err != nil {
		t.Fatalf("first consume: %v", err)
	}
	srv.Restart()
	var err2 error
	for range 500 { // the breaker may skip Redis for its cooldown after the outage
		if err2 = r.Ping(ctx); err2 == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err2 != nil {
		t.Fatalf("Redis after restart: %v", err2)
	}
	if err := codec.Consume(ctx, used); Reason(err) != ReasonReplayed {
		t.Fatalf("replay after Redis lost its memory: %v, want replayed", err)
	}
	if err := codec.ConsumeAs(ctx, used, "another client"); Reason(err) != ReasonReplayed {
		t.Fatalf("replay from another client after Redis lost its memory: %v, want replayed", err)
	}
	clock.Advance(time.Second)
	fresh := open()
	if err := codec.Consume(ctx, fresh); err != nil {
		t.Fatalf("a state issued after the restart: %v", err)
	}
	if err := codec.Consume(ctx, fresh); Reason(err) != ReasonReplayed {
		t.Fatalf("its replay: %v, want replayed", err)
	}
}

// TestConsumedStateOutlivesASkewedReplica: a state consumed on a replica whose clock runs ahead
// stays consumed for as long as a replica whose clock runs behind (by up to ReplicaSkew) still
// takes it for unexpired. Replica A, 2 seconds ahead, consumes a state B sealed with a lifetime
// of 4 seconds; B then retries it until, by its own clock, it has expired: every retry is
// refused as a replay. The single-use key used to live for the state's remaining lifetime by
// A's clock, 2 seconds, and B accepted the state a second time for the 2 seconds after it went.
// Both ways of consuming: in one step with the caller's answers budget (as the gateway does),
// and in two, the epoch guard in front of the store either way.
func TestConsumedStateOutlivesASkewedReplica(t *testing.T) {
	srv := testredis.Start(t)
	r, err := store.NewRedis(store.RedisConfig{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	// The store's memory began a second ago, so no state below is refused by the epoch guard.
	earlier := func() time.Time { return time.Now().Add(-time.Second) }
	if err := GuardEpoch(r, time.Minute, earlier).Prime(context.Background()); err != nil {
		t.Fatal(err)
	}
	const ttl = 4 * time.Second // A has 2 seconds to consume it, on a busy machine too
	ahead := func() time.Time { return time.Now().Add(2 * time.Second) }
	replica := func(now func() time.Time, answers store.Replay) *Codec {
		c, err := New(testSealer(t, "k1"), Config{TTL: ttl, Answers: answers}, GuardEpoch(r, ttl, now), now)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		answers store.Replay
	}{{"in one step", r}, {"in two steps", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits out its state's lifetime
			consumeOnSkewedReplicas(t, replica(ahead, tc.answers), replica(time.Now, tc.answers))
		})
	}
}

// consumeOnSkewedReplicas consumes on a a state b sealed, then retries it on b until it has
// expired there: each retry must be refused as a replay.
func consumeOnSkewedReplicas(t *testing.T, a, b *Codec) {
	ctx := context.Background()
	bind := testBinding(t)
	tok, err := b.Seal(stateFor(bind, KindConfirm))
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.Open(tok, bind)
	if err != nil {
		t.Fatalf("opened on the replica ahead: %v", err)
	}
	if err := a.Consume(ctx, st); err != nil {
		t.Fatalf("consumed on the replica ahead: %v", err)
	}
	retries := 0
	for {
		st, err := b.Open(tok, bind)
		if Reason(err) == ReasonExpired {
			break
		}
		if err != nil {
			t.Fatalf("opened on the replica behind: %v", err)
		}
		err = b.Consume(ctx, st)
		if Reason(err) == ReasonExpired {
			break // it expired on B between the opening and the consuming
		}
		if Reason(err) != ReasonReplayed {
			t.Fatalf("the state consumed on A retried on B after %d refusals: %v, want replayed", retries, err)
		}
		retries++
		time.Sleep(50 * time.Millisecond) // paces the retries; the loop ends on the state's expiry
	}
	if retries == 0 {
		t.Fatal("the state expired on B before any retry")
	}
}

// TestReplicaSkewIsDPoPs: the gateway states one tolerance for its replicas' clocks.
func TestReplicaSkewIsDPoPs(t *testing.T) {
	if ReplicaSkew != dpop.ReplicaSkew {
		t.Errorf("mrtr.ReplicaSkew %v, dpop.ReplicaSkew %v: docs/scaling.md states one tolerance", ReplicaSkew, dpop.ReplicaSkew)
	}
}

// forgetfulRedis is a real Redis store that loses its memory (FLUSHALL, as a Redis restarted
// without persistence) once armed, just before the next claim of a state's single-use key:
// the restart that lands between the epoch guard's check and the claim, which the Redis
// client's retry of a claim cut off by the restart writes into the empty store.
type forgetfulRedis struct {
	*store.Redis
	srv   *testredis.Server
	armed bool
}

func (f *forgetfulRedis) forget(t *testing.T, key string) {
	t.Helper()
	if !f.armed || key == epochKey {
		return
	}
	f.armed = false
	if _, err := f.srv.Do("FLUSHALL"); err != nil {
		t.Fatal(err)
	}
}

// TestConsumeRacingALostMemoryIsRefused: a state consumed once is refused as a replay when the
// store loses its memory after the epoch guard's check and before the claim of its single-use
// key, for its caller and for another client, in one step with the caller's answers budget (as
// the gateway consumes) and in two; a state issued afterwards is consumed, once. The guard was
// asked only before the claim, which the empty store took as a first use: the state consumed
// before the loss was accepted a second time.
func TestConsumeRacingALostMemoryIsRefused(t *testing.T) {
	srv := testredis.Start(t)
	r, err := store.NewRedis(store.RedisConfig{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	for _, tc := range []struct {
		name     string
		oneStep  bool
		consumer func(st *State, c *Codec) error
	}{
		{"in one step, its caller", true, func(st *State, c *Codec) error { return c.Consume(context.Background(), st) }},
		{"in one step, another client", true, func(st *State, c *Codec) error {
			return c.ConsumeAs(context.Background(), st, "another client")
		}},
		{"in two steps", false, func(st *State, c *Codec) error { return c.Consume(context.Background(), st) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &forgetfulRedis{Redis: r, srv: srv, armed: true}
			f.forget(t, "") // each case begins with an empty store: no marker of an earlier one
			var answers store.Replay
			if tc.oneStep {
				answers = onceClaims{f, t}
			}
			clock := mcptest.NewClock(time.Now())
			guard := GuardEpoch(replaysOf{f, t}, time.Minute, clock.Now)
			if err := guard.Prime(context.Background()); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Second)
			codec, err := New(testSealer(t, "k1"), Config{TTL: time.Minute, Answers: answers}, guard, clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			b := testBinding(t)
			open := func() *State {
				t.Helper()
				tok, err := codec.Seal(stateFor(b, KindConfirm))
				if err != nil {
					t.Fatal(err)
				}
				st, err := codec.Open(tok, b)
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
			used := open()
			if err := tc.consumer(used, codec); err != nil {
				t.Fatalf("first consume: %v", err)
			}
			clock.Advance(time.Second)
			f.armed = true
			if err := tc.consumer(used, codec); Reason(err) != ReasonReplayed {
				t.Fatalf("replay while the store lost its memory before the claim: %v, want replayed", err)
			}
			if f.armed {
				t.Fatal("the store never lost its memory: the test tested nothing")
			}
			clock.Advance(time.Second)
			fresh := open()
			if err := tc.consumer(fresh, codec); err != nil {
				t.Fatalf("a state issued after the loss: %v", err)
			}
			if err := tc.consumer(fresh, codec); Reason(err) != ReasonReplayed {
				t.Fatalf("its replay: %v, want replayed", err)
			}
		})
	}
}

// onceClaims is forgetfulRedis as the codec's answers: it forgets before a claim in one step.
type onceClaims struct {
	*forgetfulRedis
	t *testing.T
}

func (o onceClaims) FirstUseOnce(ctx context.Context, owner, id, once string, ttl time.Duration, b store.ReplayBudget) (store.Use, error) {
	o.forget(o.t, once)
	return o.Redis.FirstUseOnce(ctx, owner, id, once, ttl, b)
}

// replaysOf is forgetfulRedis as the epoch guard's store: it forgets before a claim in two steps.
type replaysOf struct {
	*forgetfulRedis
	t *testing.T
}

func (o replaysOf) UseOnce(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	o.forget(o.t, key)
	return o.Redis.UseOnce(ctx, key, ttl)
}

// TestEpochMarkerMissesAnOlderSnapshot pins the limit docs/scaling.md states under Persistence:
// a Redis restarted from a snapshot written after the marker but before a state was consumed
// holds the marker and not the state's single-use key, and the epoch guard cannot tell that
// memory from one that never lost a write: the consumed state is accepted once more. The
// same restart without the snapshot (the persistence the docs advise against RDB snapshots
// alone) refuses it, as TestConsumeInOneStepKeepsTheEpochGuard checks.
func TestEpochMarkerMissesAnOlderSnapshot(t *testing.T) {
	srv := testredis.Start(t)
	r, err := store.NewRedis(store.RedisConfig{URL: srv.URL(), DialTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	clock := mcptest.NewClock(time.Now())
	guard := GuardEpoch(r, time.Minute, clock.Now)
	ctx := context.Background()
	if err := guard.Prime(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Do("SAVE"); err != nil { // the snapshot: the marker, no consumed state
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	codec, err := New(testSealer(t, "k1"), Config{TTL: time.Minute, Answers: r}, guard, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	b := testBinding(t)
	tok, err := codec.Seal(stateFor(b, KindConfirm))
	if err != nil {
		t.Fatal(err)
	}
	used, err := codec.Open(tok, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := codec.Consume(ctx, used); err != nil {
		t.Fatalf("first consume: %v", err)
	}
	srv.Restart() // the server loads the snapshot from its directory
	for deadline := time.Now().Add(10 * time.Second); r.Ping(ctx) != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Redis did not answer after its restart")
		}
	}
	if _, found, err := r.Get(ctx, epochAtKey); err != nil || !found {
		t.Fatalf("the marker after the restart from the snapshot: found %v, %v; want restored", found, err)
	}
	if err := codec.Consume(ctx, used); err != nil {
		t.Fatalf("the state consumed after the snapshot, once more: %v; the guard now notices, so docs/scaling.md's limit is gone: update it", err)
	}
}
