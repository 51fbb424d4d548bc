package mrtr

import (
	"context"
	"sync"
	"testing"
	"time"
)

// memEpochStore is an in-memory EpochStore whose memory can be wiped, like a Redis restarted
// without persistence.
type memEpochStore struct {
	mu   sync.Mutex
	used map[string]bool
	kv   map[string][]byte
}

func newMemEpochStore() *memEpochStore {
	return &memEpochStore{used: map[string]bool{}, kv: map[string][]byte{}}
}

func (m *memEpochStore) UseOnce(_ context.Context, key string, _ time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used[key] {
		return false, nil
	}
	m.used[key] = true
	return true, nil
}

func (m *memEpochStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.kv[key]
	return v, ok, nil
}

func (m *memEpochStore) Set(_ context.Context, key string, v []byte, _ time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kv[key] = v
	return nil
}

func (m *memEpochStore) wipe() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used, m.kv = map[string]bool{}, map[string][]byte{}
}

func TestGuardEpoch(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st := newMemEpochStore()
	g := GuardEpoch(st, 10*time.Minute, clock)
	if err := g.Prime(ctx); err != nil {
		t.Fatal(err)
	}

	// A state issued after the store's memory began is single-use as usual.
	now = now.Add(time.Minute)
	if first, err := g.UseOnce(ctx, "n1", 10*time.Minute); err != nil || !first {
		t.Fatalf("first use: %v %v", first, err)
	}
	if first, _ := g.UseOnce(ctx, "n1", 10*time.Minute); first {
		t.Fatal("second use accepted")
	}
	// A state issued at minute 1, consumed, then the store loses its memory: the replay three
	// minutes later must still be refused.
	now = now.Add(3 * time.Minute)
	st.wipe()
	if first, err := g.UseOnce(ctx, "n1", 7*time.Minute); err != nil || first {
		t.Fatalf("replay after the store lost its memory: first=%v err=%v", first, err)
	}
	// States issued after the loss work again.
	now = now.Add(time.Second)
	if first, err := g.UseOnce(ctx, "n2", 10*time.Minute); err != nil || !first {
		t.Fatalf("fresh state after the loss: %v %v", first, err)
	}
	// The marker survives across guards (replicas) sharing the store.
	other := GuardEpoch(st, 10*time.Minute, clock)
	if first, _ := other.UseOnce(ctx, "n2", 10*time.Minute); first {
		t.Fatal("another replica accepted a used state")
	}
}

// TestEpochBegan: Began reads when the store's memory began, the same instant the guard judges
// states by, and sees a store that lost its memory begin again when it is asked.
func TestEpochBegan(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := start
	st := newMemEpochStore()
	g := GuardEpoch(st, 10*time.Minute, func() time.Time { return now })
	if err := g.Prime(ctx); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if began, err := g.Began(ctx); err != nil || !began.Equal(start) {
		t.Fatalf("Began = %v, %v; want %v", began, err, start)
	}
	st.wipe()
	now = now.Add(time.Minute)
	if began, err := g.Began(ctx); err != nil || !began.Equal(now) {
		t.Fatalf("Began after the loss = %v, %v; want %v", began, err, now)
	}
	later := now
	now = now.Add(time.Minute)
	if began, err := g.Began(ctx); err != nil || !began.Equal(later) {
		t.Fatalf("Began once the marker is back = %v, %v; want %v", began, err, later)
	}
}

// TestEpochBeganUnreadableRecord: a marker whose time is missing or unreadable (a replica that
// failed between the two writes, or a value written by something else) is recorded again as
// now by Began, as the guard does when it judges a state, rather than read as a zero time that
// would let every earlier proof through.
func TestEpochBeganUnreadableRecord(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := newMemEpochStore()
	g := GuardEpoch(st, 10*time.Minute, func() time.Time { return now })
	if err := g.Prime(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Set(ctx, epochAtKey, []byte("not a time"), time.Hour); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if began, err := g.Began(ctx); err != nil || !began.Equal(now) {
		t.Fatalf("Began over an unreadable record = %v, %v; want %v", began, err, now)
	}
	if v, ok, _ := st.Get(ctx, epochAtKey); !ok || string(v) != now.Format(time.RFC3339Nano) {
		t.Fatalf("record after Began = %q, %v; want %q", v, ok, now.Format(time.RFC3339Nano))
	}
}

// TestEpochSince: a record the caller read itself (MarkerKey) is taken as it is when valid, and
// when missing (a store that lost its memory) or unreadable the marker is written anew, as
// Began does.
func TestEpochSince(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := start
	st := newMemEpochStore()
	g := GuardEpoch(st, 10*time.Minute, func() time.Time { return now })
	if err := g.Prime(ctx); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	v, found, _ := st.Get(ctx, g.MarkerKey())
	if began, err := g.Since(ctx, v, found); err != nil || !began.Equal(start) {
		t.Fatalf("Since(the record) = %v, %v; want %v", began, err, start)
	}
	for name, rec := range map[string]struct {
		v     []byte
		found bool
	}{"missing": {nil, false}, "unreadable": {[]byte("not a time"), true}} {
		st.wipe()
		now = now.Add(time.Minute)
		if began, err := g.Since(ctx, rec.v, rec.found); err != nil || !began.Equal(now) {
			t.Fatalf("Since(%s) = %v, %v; want %v", name, began, err, now)
		}
		if v, ok, _ := st.Get(ctx, g.MarkerKey()); !ok || string(v) != now.Format(time.RFC3339Nano) {
			t.Fatalf("%s: record after Since = %q, %v", name, v, ok)
		}
	}
}
