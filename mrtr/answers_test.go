package mrtr

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// answersCodec is a codec allowing each caller budget answers a TTL (a minute), its memory
// store and its clock, and open, which seals and opens a confirmation state for a binding.
func answersCodec(t *testing.T, budget int) (*Codec, *store.Memory, *mcptest.Clock, func(Binding) *State) {
	t.Helper()
	clock := mcptest.NewClock(time.Date(2026, 11, 3, 12, 0, 0, 0, time.UTC))
	mem, err := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	codec, err := New(testSealer(t, "k1"), Config{TTL: time.Minute, MaxAnswersPerCaller: budget, Answers: mem}, mem, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	return codec, mem, clock, func(b Binding) *State { return sealOpen(t, codec, b) }
}

// TestAnswersBoundedPerCaller: a caller consumes at most MaxAnswersPerCaller states per TTL and
// ReplicaSkew (the store's replay budget); the one refused is not recorded, so it is still
// usable, until it expires, once the window ends; a replay is still a replay, and another
// caller is not affected.
func TestAnswersBoundedPerCaller(t *testing.T) {
	codec, _, clock, open := answersCodec(t, 2)
	ctx := context.Background()
	alice, bob := testBinding(t), testBinding(t)
	bob.Subject = "bob"
	used := open(alice)
	for i, st := range []*State{used, open(alice)} {
		if err := codec.Consume(ctx, st); err != nil {
			t.Fatalf("alice's answer %d: %v", i+1, err)
		}
	}
	// The window started with the first answer and lasts the TTL and ReplicaSkew, as long as
	// the records live; a state issued after its first ReplicaSkew outlives it.
	clock.Advance(ReplicaSkew + 15*time.Second)
	third := open(alice)
	var over *OverBudgetError
	if err := codec.Consume(ctx, third); !errors.As(err, &over) || over.RetryAfter <= 0 || over.RetryAfter > 45*time.Second {
		t.Fatalf("alice's third answer: %v, want OverBudgetError with a Retry-After within the window", err)
	}
	if err := codec.Consume(ctx, used); Reason(err) != ReasonReplayed {
		t.Fatalf("a replay over the budget: %v, want replayed", err)
	}
	if err := codec.Consume(ctx, open(bob)); err != nil {
		t.Fatalf("bob while alice is over her budget: %v", err)
	}
	clock.Advance(over.RetryAfter)
	if err := codec.Consume(ctx, third); err != nil {
		t.Fatalf("the refused state once the window ended: %v", err)
	}
}

func TestAnswersBudgetValidated(t *testing.T) {
	for _, n := range []int{-1, MaxMaxAnswersPerCaller + 1} {
		if err := (Config{MaxAnswersPerCaller: n}).Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("MaxAnswersPerCaller %d: %v, want ErrInvalidConfig", n, err)
		}
	}
}

// TestAnswersBudgetApartFromProofs: the store's replay records keep other budgets per caller
// under the same store (DPoP proofs under issuer#subject): answered rounds count against a
// budget of their own, so a caller that spent its proof budget still answers, and answers spend
// nothing of its proofs'.
func TestAnswersBudgetApartFromProofs(t *testing.T) {
	codec, mem, _, open := answersCodec(t, 1)
	ctx := context.Background()
	alice := testBinding(t)
	proofs := store.ReplayBudget{Count: 1, Window: time.Minute}
	proofOwner := alice.Issuer + "#" + alice.Subject // as authz records DPoP proofs
	if u, err := mem.FirstUse(ctx, proofOwner, "jkt.jti-1", time.Minute, proofs); err != nil || u != store.UseFirst {
		t.Fatalf("alice's first proof: %v %v", u, err)
	}
	if err := codec.Consume(ctx, open(alice)); err != nil {
		t.Fatalf("alice's answer after her proof budget was spent: %v", err)
	}
	if u, err := mem.FirstUse(ctx, proofOwner, "jkt.jti-2", time.Minute, store.ReplayBudget{Count: 2, Window: time.Minute}); err != nil || u != store.UseFirst {
		t.Fatalf("alice's second proof of a budget of two after one answer: %v %v, want first", u, err)
	}
}

// TestAnswersBoundedPerClientWithoutAuthentication: states sealed without a caller (no
// authentication) are counted against the client that answers them (ConsumeAs with its
// callerkey.Client key): a client past its budget is refused while another client's answers
// go through. A state with a caller is counted against that caller, whatever client key comes
// with it, so a caller cannot spread its budget over addresses.
func TestAnswersBoundedPerClientWithoutAuthentication(t *testing.T) {
	codec, _, _, open := answersCodec(t, 2)
	ctx := context.Background()
	anon := testBinding(t)
	anon.Issuer, anon.Subject = "", ""
	a := callerkey.Client(netip.MustParsePrefix("192.0.2.1/32"))
	b := callerkey.Client(netip.MustParsePrefix("192.0.2.2/32"))
	for i := range 2 {
		if err := codec.ConsumeAs(ctx, open(anon), a); err != nil {
			t.Fatalf("client A's answer %d: %v", i+1, err)
		}
	}
	var over *OverBudgetError
	if err := codec.ConsumeAs(ctx, open(anon), a); !errors.As(err, &over) {
		t.Fatalf("client A's third answer: %v, want OverBudgetError", err)
	}
	if err := codec.ConsumeAs(ctx, open(anon), b); err != nil {
		t.Fatalf("client B while A is over its budget: %v", err)
	}
	alice := testBinding(t)
	for i := range 2 {
		if err := codec.ConsumeAs(ctx, open(alice), callerkey.Client(netip.MustParsePrefix(fmt.Sprintf("198.51.100.%d/32", i)))); err != nil {
			t.Fatalf("alice's answer %d: %v", i+1, err)
		}
	}
	if err := codec.ConsumeAs(ctx, open(alice), callerkey.Client(netip.MustParsePrefix("198.51.100.9/32"))); !errors.As(err, &over) {
		t.Fatalf("alice's third answer from a third address: %v, want OverBudgetError (her budget is hers)", err)
	}
}
