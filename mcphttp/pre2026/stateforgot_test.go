package pre2026

import (
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestForgottenSubscriptionsWrittenBack: a store that forgot a caller's record (Redis restarted
// without its data) does not take a GET stream's subscriptions with it. The stream that read its
// set from the record knows it was forgotten, not emptied (heldSet.forgot), whatever came
// after: nothing, a subscribe or an unsubscribe of the session, another session's change, a
// record that does not open written over; and writes it back merged with the session's changes
// since: what it subscribed to kept (and first, within maxSessionSubscriptions), what it
// unsubscribed from left out, how the client spelled a URI kept. A session's entry the caller's
// bound evicted from a record the store kept, and a set the client emptied, are not forgotten.
// Before, the set the store read was taken as the truth: the next change wrote a set without
// the earlier subscriptions, and the stream's listen dropped them.
func TestForgottenSubscriptionsWrittenBack(t *testing.T) {
	const (
		alice              = "https://idp#alice"
		r1, r2, r2s, r3    = "be+mem://r/1", "be+mem://r/2", "be+mem://r/%32", "be+mem://r/3"
		otherSess, evicted = "another session's change", "evicted by the caller's bound"
	)
	cases := []struct {
		name   string
		after  func(t *testing.T, f *forgotFixture) // what happens once the store forgot
		forgot bool
		want   []string
	}{
		{name: "nothing", forgot: true, want: []string{r1, r2}},
		{name: "a subscribe", forgot: true, want: []string{r3, r1, r2},
			after: func(t *testing.T, f *forgotFixture) { f.sub(t, f.sess, r3, true) }},
		{name: "an unsubscribe", forgot: true, want: []string{r2},
			after: func(t *testing.T, f *forgotFixture) { f.sub(t, f.sess, r1, false) }},
		{name: "a subscribe then an unsubscribe of it", forgot: true, want: []string{r1, r2},
			after: func(t *testing.T, f *forgotFixture) { f.sub(t, f.sess, r3, true); f.sub(t, f.sess, r3, false) }},
		{name: "an unsubscribe then a subscribe again", forgot: true, want: []string{r1, r2},
			after: func(t *testing.T, f *forgotFixture) { f.sub(t, f.sess, r1, false); f.sub(t, f.sess, r1, true) }},
		{name: otherSess, forgot: true, want: []string{r1, r2},
			after: func(t *testing.T, f *forgotFixture) { f.sub(t, f.session(1), r3, true) }},
		{name: "a log level", forgot: true, want: []string{r1, r2},
			after: func(t *testing.T, f *forgotFixture) {
				if err := f.st.setLevel(t.Context(), f.sess, alice, "info"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a record that does not open, then a subscribe", forgot: true, want: []string{r3, r1, r2},
			after: func(t *testing.T, f *forgotFixture) {
				if err := f.mem.Set(t.Context(), stateKey(alice), []byte("not a record"), time.Hour); err != nil {
					t.Fatal(err)
				}
				f.sub(t, f.sess, r3, true)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newForgotFixture(t)
			f.sub(t, f.sess, r1, true)
			if err := f.st.updateSubscriptions(t.Context(), f.sess, alice, r2, r2s, true, nil); err != nil {
				t.Fatal(err)
			}
			held := f.held(t)
			if err := f.mem.Delete(t.Context(), stateKey(alice)); err != nil {
				t.Fatal(err)
			}
			if c.after != nil {
				c.after(t, f)
			}
			now := f.held(t)
			if got := held.forgot(now); got != c.forgot {
				t.Fatalf("forgot %v after %s, want %v", got, c.name, c.forgot)
			}
			restarts := 0
			stop := f.st.recheck(t.Context(), f.sess, alice, held, func() { restarts++ })
			f.fire()
			stop()
			if restarts != 1 {
				t.Errorf("a recheck restarted the listen %d times, want once to write the set back", restarts)
			}
			got, err := f.st.restore(t.Context(), f.sess, alice, held)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.uris, c.want) || got.as[r2] != r2s {
				t.Errorf("written back: %v %v, want %v with %s as %s", got.uris, got.as, c.want, r2, r2s)
			}
			if again := f.held(t); !slices.Equal(again.uris, c.want) || held.forgot(got) && got.forgot(again) {
				t.Errorf("the store holds %v after the set was written back, want %v", again.uris, c.want)
			}
		})
	}

	t.Run("kept by the store", func(t *testing.T) {
		for _, what := range []string{evicted, "the client unsubscribed all"} {
			f := newForgotFixture(t)
			f.sub(t, f.sess, r1, true)
			held := f.held(t)
			if what == evicted {
				for i := range maxStateSessions {
					f.sub(t, f.session(i+1), r3, true)
				}
			} else {
				f.sub(t, f.sess, r1, false)
			}
			now := f.held(t)
			if held.forgot(now) || len(now.uris) != 0 {
				t.Errorf("%s: forgot %v with %v stored, want the stored empty set taken", what, held.forgot(now), now.uris)
			}
		}
	})

	t.Run("within the session's bound", func(t *testing.T) {
		f := newForgotFixture(t)
		var all []string
		for i := range maxSessionSubscriptions {
			u := fmt.Sprintf("be+mem://many/%d", i)
			f.sub(t, f.sess, u, true)
			all = append(all, u)
		}
		held := f.held(t)
		if err := f.mem.Delete(t.Context(), stateKey(alice)); err != nil {
			t.Fatal(err)
		}
		f.sub(t, f.sess, r3, true)
		got, err := f.st.restore(t.Context(), f.sess, alice, held)
		if err != nil {
			t.Fatal(err)
		}
		if want := append([]string{r3}, all[:maxSessionSubscriptions-1]...); !slices.Equal(got.uris, want) {
			t.Errorf("written back %d subscriptions, want the session's new one and %d of the held", len(got.uris), maxSessionSubscriptions-1)
		}
	})
}

// forgotFixture is a session's state in a process-local store the test makes forget, with the
// rechecks fired by hand.
type forgotFixture struct {
	st      *sessionState
	mem     *store.Memory
	sess    *legacysession.Session
	pending []func()
}

func newForgotFixture(t *testing.T) *forgotFixture {
	t.Helper()
	clock := mcptest.NewClock(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	mem, err := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	st, err := newSessionState(mem, testKeyRing(t), nil, slog.New(slog.DiscardHandler), clock.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &forgotFixture{st: st, mem: mem}
	st.after = func(_ time.Duration, fn func()) func() bool {
		f.pending = append(f.pending, fn)
		return func() bool { return false }
	}
	f.sess = f.session(0)
	return f
}

// session is the caller's i-th session.
func (f *forgotFixture) session(i int) *legacysession.Session {
	s := &legacysession.Session{Version: "2025-11-25", Expires: f.st.now().Add(time.Hour)}
	s.Nonce[0], s.Nonce[1] = 1, byte(i)
	return s
}

func (f *forgotFixture) sub(t *testing.T, sess *legacysession.Session, uri string, add bool) {
	t.Helper()
	if err := f.st.updateSubscriptions(t.Context(), sess, "https://idp#alice", uri, uri, add, nil); err != nil {
		t.Fatal(err)
	}
}

func (f *forgotFixture) held(t *testing.T) heldSet {
	t.Helper()
	h, err := f.st.readHeld(t.Context(), f.sess, "https://idp#alice")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// fire runs the rechecks due once.
func (f *forgotFixture) fire() {
	due := f.pending
	f.pending = nil
	for _, fn := range due {
		fn()
	}
}
