package mrtr

import (
	"context"
	"errors"
	"testing"
	"time"

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
