package pre2026

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestSessionStateBoundedPerCaller: however many sessions a caller opens, the gateway keeps the
// state of its maxStateSessions most recently changed ones, in one record of at most
// maxStateBytes; a change too large for the record even alone is refused; another caller's
// state is untouched.
func TestSessionStateBoundedPerCaller(t *testing.T) {
	clock := mcptest.NewClock(time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC))
	kv, err := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	st, err := newSessionState(kv, nil, slog.New(slog.DiscardHandler), clock.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	session := func(n int) *legacysession.Session {
		s := &legacysession.Session{Version: "2025-11-25", Expires: clock.Now().Add(time.Hour)}
		s.Nonce[0], s.Nonce[1] = byte(n), byte(n>>8)
		return s
	}
	const alice, bob = "https://idp#alice", "https://idp#bob"
	if err := st.setLevel(ctx, session(1000), bob, "debug"); err != nil {
		t.Fatal(err)
	}
	for n := range 3 * maxStateSessions {
		if err := st.setLevel(ctx, session(n), alice, "info"); err != nil {
			t.Fatalf("session %d: %v", n, err)
		}
	}
	v, _, err := kv.Get(ctx, stateKey(alice))
	if err != nil {
		t.Fatal(err)
	}
	var cs callerState
	if err := json.Unmarshal(v, &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs.Sessions) != maxStateSessions {
		t.Errorf("alice's record holds %d sessions, want %d", len(cs.Sessions), maxStateSessions)
	}
	if cs.entry(session(3*maxStateSessions-1)) == nil || cs.entry(session(0)) != nil {
		t.Error("the record does not keep the most recently changed sessions")
	}
	// Subscriptions that grow the record past its bound push the older sessions out first.
	long := "be+mem://" + strings.Repeat("x", 900)
	var refused error
	for i := 0; i < maxSessionSubscriptions && refused == nil; i++ {
		uri := fmt.Sprintf("%s/%d", long, i)
		refused = st.updateSubscriptions(ctx, session(0), alice, uri, uri, true)
	}
	if !errors.Is(refused, errStateBound) {
		t.Errorf("a session's subscriptions over %d bytes: %v, want errStateBound", maxStateBytes, refused)
	}
	if v, _, _ = kv.Get(ctx, stateKey(alice)); len(v) > maxStateBytes {
		t.Errorf("alice's record is %d bytes, over %d", len(v), maxStateBytes)
	}
	st.levelTTL = 0 // read from the store, not this replica's cache
	if got := st.level(ctx, session(1000), bob); got != "debug" {
		t.Errorf("bob's level = %q after alice's sessions, want debug", got)
	}
}
