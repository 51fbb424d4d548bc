package mrtr

import (
	"context"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestEpochGuardJudgesTheIssueTheStateCarries: after Redis lost its data, a state issued before
// the loss is refused as a replay on every replica, whatever mrtr.ttl each runs with. Replica A
// (mrtr.ttl 10 minutes, its clock 5 seconds behind B's) seals a confirmation; it is consumed;
// Redis is emptied (FLUSHALL) and A marks the store's new memory. Replica B, whose mrtr.ttl was
// shortened to a minute (a rolling update), is then handed the consumed state. It used to read
// the state's issue time as its expiry less its own ttl, 9 minutes after the real one and so
// after the loss, and accepted the state a second time. Both ways of consuming (in one step
// with the caller's answers budget, as the gateway does, and in two); a state A issues after
// the loss is consumed, once.
func TestEpochGuardJudgesTheIssueTheStateCarries(t *testing.T) {
	srv := testredis.Start(t)
	r, err := store.NewRedis(store.RedisConfig{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	ctx := context.Background()
	behind := func() time.Time { return time.Now().Add(-5 * time.Second) }
	// The store's memory began a minute before anything below.
	earlier := func() time.Time { return time.Now().Add(-time.Minute) }
	if err := GuardEpoch(r, time.Minute, earlier).Prime(ctx); err != nil {
		t.Fatal(err)
	}
	replica := func(ttl time.Duration, now func() time.Time, answers store.Replay) (*Codec, *EpochGuard) {
		g := GuardEpoch(r, ttl, now)
		c, err := New(testSealer(t, "k1"), Config{TTL: ttl, Answers: answers}, g, now)
		if err != nil {
			t.Fatal(err)
		}
		return c, g
	}
	bind := testBinding(t)
	for _, tc := range []struct {
		name    string
		answers store.Replay
	}{{"in one step", r}, {"in two steps", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			a, guardA := replica(10*time.Minute, behind, tc.answers)
			b, _ := replica(time.Minute, time.Now, tc.answers)
			tok, err := a.Seal(stateFor(bind, KindConfirm))
			if err != nil {
				t.Fatal(err)
			}
			st, err := b.Open(tok, bind)
			if err != nil {
				t.Fatalf("opened on B: %v", err)
			}
			if err := a.Consume(ctx, st); err != nil {
				t.Fatalf("consumed on A: %v", err)
			}
			if _, err := srv.Do("FLUSHALL"); err != nil {
				t.Fatal(err)
			}
			if err := guardA.Prime(ctx); err != nil {
				t.Fatal(err)
			}
			if err := b.Consume(ctx, st); Reason(err) != ReasonReplayed {
				t.Fatalf("the state consumed before the loss, on the replica with the shorter ttl: %v, want replayed", err)
			}
			if err := a.Consume(ctx, st); Reason(err) != ReasonReplayed {
				t.Fatalf("the state consumed before the loss, on its own replica: %v, want replayed", err)
			}
			// A state issued once the marker is there: A's clock steps past the marker's
			// millisecond, and B, ahead of it, takes the state for issued after the loss too.
			for !behind().Add(-time.Millisecond).After(mustBegan(t, guardA)) {
				time.Sleep(time.Millisecond)
			}
			fresh, err := a.Seal(stateFor(bind, KindConfirm))
			if err != nil {
				t.Fatal(err)
			}
			st, err = b.Open(fresh, bind)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Consume(ctx, st); err != nil {
				t.Fatalf("a state issued after the loss: %v", err)
			}
			if err := a.Consume(ctx, st); Reason(err) != ReasonReplayed {
				t.Fatalf("its replay: %v, want replayed", err)
			}
		})
	}
}

func mustBegan(t *testing.T, g *EpochGuard) time.Time {
	t.Helper()
	since, err := g.Began(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return since
}

// TestStateCarriesItsIssue: a sealed state carries when it was issued, by the sealing replica's
// clock, and its expiry is that plus the sealing replica's ttl, whatever the opening replica's
// ttl; a state of the previous release's format (version 1, without the issue time) still opens
// until its expiry, its issue time read as before: the expiry less the opening replica's ttl.
func TestStateCarriesItsIssue(t *testing.T) {
	f := newFixture(t)
	b := testBinding(t)
	other, err := New(testSealer(t, "k1"), Config{TTL: time.Minute}, f.replays, f.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := f.codec.Seal(stateFor(b, KindConfirm))
	if err != nil {
		t.Fatal(err)
	}
	st, err := other.Open(tok, b)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Issued.Equal(f.clock.Now()) || !st.Expiry.Equal(f.clock.Now().Add(DefaultTTL)) {
		t.Fatalf("issued %v, expiry %v; want %v and %v", st.Issued, st.Expiry, f.clock.Now(), f.clock.Now().Add(DefaultTTL))
	}
	if got := other.issued(st); !got.Equal(st.Issued) {
		t.Fatalf("issue time judged %v, want the carried %v", got, st.Issued)
	}

	// The previous release's format: the same fields without the lifetime.
	in := stateFor(b, KindConfirm)
	in.Issued, in.Expiry = f.clock.Now(), f.clock.Now().Add(DefaultTTL)
	in.Nonce = [16]byte{1}
	v2, err := in.marshal()
	if err != nil {
		t.Fatal(err)
	}
	v1 := append([]byte{stateVersion1}, v2[1:12]...)
	v1 = append(v1, v2[16:]...)
	old, err := testSealer(t, "k1").Seal(v1)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(DefaultTTL - time.Millisecond)
	st, err = f.codec.Open(old, b)
	if err != nil {
		t.Fatalf("a state of the previous release's format: %v", err)
	}
	if !st.Issued.IsZero() || !st.Expiry.Equal(in.Expiry) || st.Nonce != in.Nonce || st.ArgsDigest != in.ArgsDigest {
		t.Fatalf("opened %+v, want %+v without its issue time", st, in)
	}
	if got := other.issued(st); !got.Equal(in.Expiry.Add(-time.Minute)) {
		t.Fatalf("issue time judged %v, want the expiry less the ttl", got)
	}
	if err := f.codec.Consume(context.Background(), st); err != nil {
		t.Fatalf("consumed: %v", err)
	}
	if err := f.codec.Consume(context.Background(), st); Reason(err) != ReasonReplayed {
		t.Fatalf("replayed: %v", err)
	}
	f.clock.Advance(time.Millisecond)
	if _, err := f.codec.Open(old, b); Reason(err) != ReasonExpired {
		t.Fatalf("past its expiry: %v, want expired", err)
	}
	var short State
	if err := short.unmarshal(v1[:stateFixedHeader1-1]); err == nil {
		t.Fatal("a version 1 state shorter than its header opened")
	}
}

// TestSealedStateSize: the issue time costs four bytes of a sealed state, the size a client
// carries and every replica opens.
func TestSealedStateSize(t *testing.T) {
	f := newFixture(t)
	in := stateFor(testBinding(t), KindConfirm)
	in.Issued, in.Expiry = f.clock.Now(), f.clock.Now().Add(DefaultTTL)
	b, err := in.marshal()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := f.codec.Seal(in)
	if err != nil {
		t.Fatal(err)
	}
	v1 := append([]byte{stateVersion1}, b[1:12]...)
	old, err := testSealer(t, "k1").Seal(append(v1, b[16:]...))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("payload %d bytes (version 1: %d), token %d characters (version 1: %d)", len(b), len(b)-4, len(tok), len(old))
	if len(b) != stateFixedHeader+5+len(in.Issuer)+len(in.Subject)+len(in.Upstream)+len(in.Name) {
		t.Fatalf("payload %d bytes", len(b))
	}
}
