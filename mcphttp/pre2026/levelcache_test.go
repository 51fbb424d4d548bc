package pre2026

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// countingStore counts the reads of a real store.
type countingStore struct {
	StateStore
	gets atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	s.gets.Add(1)
	return s.StateStore.Get(ctx, key)
}

// TestLevelCacheShareOneCallerCannotEvictOthers: alice's sessions ask for their level many
// times more often than the level cache holds entries; she evicts only her own, so bob's
// session's level is still answered from the cache (no store read), as is her latest session's,
// and the caller index holds the two of them.
func TestLevelCacheShareOneCallerCannotEvictOthers(t *testing.T) {
	clock := mcptest.NewClock(time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC))
	mem, err := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	kv := &countingStore{StateStore: mem}
	var own, total atomic.Int64
	st, err := newSessionState(kv, testKeyRing(t), nil, slog.New(slog.DiscardHandler), clock.Now, func(o bool) {
		if o {
			own.Add(1)
		} else {
			total.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	session := func(n int) *legacysession.Session {
		s := &legacysession.Session{Version: "2025-11-25", Expires: clock.Now().Add(time.Hour)}
		s.Nonce[0], s.Nonce[1], s.Nonce[2] = byte(n), byte(n>>8), byte(n>>16)
		return s
	}
	const alice, bob, flood = "https://idp#alice", "https://idp#bob", 4 * levelCacheMax
	bobs := session(flood + 2)
	if err := st.setLevel(ctx, bobs, bob, "debug"); err != nil {
		t.Fatal(err)
	}
	for n := range flood {
		st.level(ctx, session(n+1), alice)
	}
	reads := kv.gets.Load()
	if got := st.level(ctx, bobs, bob); got != "debug" {
		t.Fatalf("bob's level = %q, want debug", got)
	}
	st.level(ctx, session(flood), alice)
	if got := kv.gets.Load(); got != reads {
		t.Fatalf("bob's or alice's latest level was read from the store (%d reads), not the cache", got-reads)
	}
	share := levelCacheMax / levelShareDivisor
	if own.Load() != int64(flood-share) || total.Load() != 0 || st.levels.lru.Callers() != 2 {
		t.Fatalf("evictions %d own, %d total; %d callers indexed; want %d, 0, 2", own.Load(), total.Load(), st.levels.lru.Callers(), flood-share)
	}
}
