package webpage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// TestDwellKeptByTheStore: a form counts MinDwell after its page was last shown, by the store's
// clock alone; each session and form has its own; a store that cannot answer is no dwell.
func TestDwellKeptByTheStore(t *testing.T) {
	clock := mcptest.NewClock(time.Now())
	mem, err := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	ctx := context.Background()
	alice, bob := &webpage.Session{Subject: "alice", CSRF: make([]byte, 32)}, &webpage.Session{Subject: "bob", CSRF: []byte("another-session-key-of-32-bytes!")}
	dwelt := func(s *webpage.Session, id string) bool {
		t.Helper()
		ok, err := webpage.Dwelt(ctx, mem, s, "p", id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !dwelt(alice, "x") {
		t.Error("a form whose page was never shown lately does not count")
	}
	if err := webpage.Shown(ctx, mem, alice, "p", "x"); err != nil {
		t.Fatal(err)
	}
	if dwelt(alice, "x") || !dwelt(bob, "x") || !dwelt(alice, "y") {
		t.Error("at once: the form shown must not count, other sessions' and forms' must")
	}
	clock.Advance(webpage.MinDwell - time.Millisecond)
	if dwelt(alice, "x") {
		t.Error("just before MinDwell: counts")
	}
	clock.Advance(time.Millisecond)
	if !dwelt(alice, "x") {
		t.Error("after MinDwell: does not count")
	}
	if ok, err := webpage.Dwelt(ctx, failing{}, alice, "p", "x"); ok || err == nil {
		t.Errorf("a failing store: %v %v, want no dwell and its error", ok, err)
	}
}

type failing struct{}

func (failing) Get(context.Context, string) ([]byte, bool, error) {
	return nil, false, errors.New("down")
}
func (failing) Set(context.Context, string, []byte, time.Duration) error {
	return errors.New("down")
}
