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
	st := sealOpen(t, codec, testBinding(t))
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
	srv, r := restartableRedis(t)
	codec, clock, open := guardedCodec(t, r, r)
	ctx := context.Background()
	used := open()
	if err := codec.Consume(ctx, used); err != nil {
		t.Fatalf("first consume: %v", err)
	}
	restart(t, srv, r)
	if err := codec.Consume(ctx, used); Reason(err) != ReasonReplayed {
		t.Fatalf("replay after Redis lost its memory: %v, want replayed", err)
	}
	if err := codec.ConsumeAs(ctx, used, "another client"); Reason(err) != ReasonReplayed {
		t.Fatalf("replay from another client after Redis lost its memory: %v, want replayed", err)
	}
	freshConsumedOnce(t, clock, open, func(st *State) error { return codec.Consume(ctx, st) })
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
	srv, r := restartableRedis(t)
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
			codec, clock, open := guardedCodec(t, replaysOf{f, t}, answers)
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
			freshConsumedOnce(t, clock, open, func(st *State) error { return tc.consumer(st, codec) })
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
	srv, r := restartableRedis(t)
	codec, _, open := guardedCodec(t, r, r)
	if _, err := srv.Do("SAVE"); err != nil { // the snapshot: the marker, no consumed state
		t.Fatal(err)
	}
	ctx := context.Background()
	used := open()
	if err := codec.Consume(ctx, used); err != nil {
		t.Fatalf("first consume: %v", err)
	}
	restart(t, srv, r) // the server loads the snapshot from its directory
	if _, found, err := r.Get(ctx, epochAtKey); err != nil || !found {
		t.Fatalf("the marker after the restart from the snapshot: found %v, %v; want restored", found, err)
	}
	if err := codec.Consume(ctx, used); err != nil {
		t.Fatalf("the state consumed after the snapshot, once more: %v; the guard now notices, so docs/scaling.md's limit is gone: update it", err)
	}
}

// guardedCodec is a codec consuming through an epoch guard over s, its answers counted in
// answers (nil: consumed in two steps), with the guard's marker primed and the clock a second
// past it (states carry their expiry in milliseconds: none falls in the marker's millisecond),
// and open, which seals and opens a new state.
func guardedCodec(t *testing.T, s EpochStore, answers store.Replay) (*Codec, *mcptest.Clock, func() *State) {
	t.Helper()
	clock := mcptest.NewClock(time.Now())
	guard := GuardEpoch(s, time.Minute, clock.Now)
	if err := guard.Prime(context.Background()); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	codec, err := New(testSealer(t, "k1"), Config{TTL: time.Minute, Answers: answers}, guard, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	b := testBinding(t)
	return codec, clock, func() *State { return sealOpen(t, codec, b) }
}

// sealOpen seals a new confirmation state bound to b and opens it as its retry would.
func sealOpen(t *testing.T, codec *Codec, b Binding) *State {
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

// restartableRedis is a real redis-server and a store over it that dials for at most half a
// second, so that it finds the server again soon after a restart.
func restartableRedis(t *testing.T) (*testredis.Server, *store.Redis) {
	t.Helper()
	srv := testredis.Start(t)
	r, err := store.NewRedis(store.RedisConfig{URL: srv.URL(), DialTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return srv, r
}

// restart restarts srv and waits until r reaches it again (the breaker may skip Redis for its
// cooldown after the outage).
func restart(t *testing.T, srv *testredis.Server, r *store.Redis) {
	t.Helper()
	srv.Restart()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := r.Ping(context.Background())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Redis after restart: %v", err)
		}
	}
}

// freshConsumedOnce checks that a state issued a second after the store lost its memory is
// consumed, once.
func freshConsumedOnce(t *testing.T, clock *mcptest.Clock, open func() *State, consume func(*State) error) {
	t.Helper()
	clock.Advance(time.Second)
	fresh := open()
	if err := consume(fresh); err != nil {
		t.Fatalf("a state issued after the loss: %v", err)
	}
	if err := consume(fresh); Reason(err) != ReasonReplayed {
		t.Fatalf("its replay: %v, want replayed", err)
	}
}
