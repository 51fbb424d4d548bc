package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

func newMemoryHarness(t *testing.T, opts MemoryOptions) (harness, *Memory, *mcptest.Clock) {
	t.Helper()
	clock := newFakeClock()
	opts.Now = clock.Now
	m, err := NewMemory(opts)
	if err != nil {
		t.Fatalf("NewMemory: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return harness{store: m, elapse: clock.Advance}, m, clock
}

func TestMemoryContract(t *testing.T) {
	runContract(t, func(t *testing.T) harness {
		h, _, _ := newMemoryHarness(t, MemoryOptions{})
		return h
	})
}

func TestMemoryExpiryBoundary(t *testing.T) {
	h, _, _ := newMemoryHarness(t, MemoryOptions{})
	ctx := context.Background()
	if first, _ := h.store.UseOnce(ctx, "n", time.Second); !first {
		t.Fatal("first UseOnce not first")
	}
	h.elapse(time.Second - time.Microsecond)
	if first, _ := h.store.UseOnce(ctx, "n", time.Second); first {
		t.Fatal("UseOnce one microsecond before expiry was first")
	}
	h.elapse(time.Microsecond)
	if first, _ := h.store.UseOnce(ctx, "n", time.Second); !first {
		t.Fatal("UseOnce exactly at expiry was not first")
	}
}

func TestMemoryCapFailsInsteadOfEvicting(t *testing.T) {
	h, m, _ := newMemoryHarness(t, MemoryOptions{MaxNonces: 4, MaxValues: 4, Shards: 1})
	ctx := context.Background()
	for i := range 4 {
		if first, err := h.store.UseOnce(ctx, fmt.Sprint("n", i), time.Minute); err != nil || !first {
			t.Fatalf("UseOnce %d: %v, %v", i, first, err)
		}
	}
	_, err := h.store.UseOnce(ctx, "n4", time.Minute)
	if !errors.Is(err, ErrFull) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("UseOnce over the cap err = %v, want ErrFull and ErrUnavailable", err)
	}
	if first, err := h.store.UseOnce(ctx, "n0", time.Minute); err != nil || first {
		t.Fatalf("replay of a live nonce at the cap: first=%v err=%v, want false, nil", first, err)
	}
	h.elapse(time.Minute)
	if first, err := h.store.UseOnce(ctx, "n4", time.Minute); err != nil || !first {
		t.Fatalf("UseOnce after entries expired: %v, %v", first, err)
	}
	if n := m.Len(); n > 4 {
		t.Fatalf("Len = %d, want at most the cap 4", n)
	}
}

func TestMemoryIncrementalSweep(t *testing.T) {
	h, m, _ := newMemoryHarness(t, MemoryOptions{Shards: 1})
	ctx := context.Background()
	const n = 100
	for i := range n {
		if _, err := h.store.UseOnce(ctx, fmt.Sprint("old", i), time.Second); err != nil {
			t.Fatal(err)
		}
	}
	h.elapse(2 * time.Second)
	if _, err := h.store.UseOnce(ctx, "new", time.Second); err != nil {
		t.Fatal(err)
	}
	// The write inspected sweepBatch entries, all expired, then added one.
	if got, want := m.Len(), n-sweepBatch+1; got != want {
		t.Fatalf("Len after one write = %d, want %d", got, want)
	}
	for i := range n {
		if _, err := h.store.UseOnce(ctx, fmt.Sprint("new", i), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if got := m.Len(); got > n+1 {
		t.Fatalf("Len = %d after %d more writes, want expired entries swept (at most %d)", got, n, n+1)
	}
}

func TestMemoryOptions(t *testing.T) {
	tests := []struct {
		name       string
		opts       MemoryOptions
		wantErr    bool
		wantShards int
	}{
		{name: "zero value", opts: MemoryOptions{}, wantShards: DefaultShards},
		{name: "rounded up to a power of two", opts: MemoryOptions{Shards: 3}, wantShards: 4},
		{name: "one shard", opts: MemoryOptions{Shards: 1}, wantShards: 1},
		{name: "negative cap", opts: MemoryOptions{MaxNonces: -1}, wantErr: true},
		{name: "negative value cap", opts: MemoryOptions{MaxValues: -1}, wantErr: true},
		{name: "negative byte cap", opts: MemoryOptions{MaxValueBytes: -1}, wantErr: true},
		{name: "too many shards", opts: MemoryOptions{Shards: MaxShards + 1}, wantErr: true},
		{name: "negative shards", opts: MemoryOptions{Shards: -2}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewMemory(tt.opts)
			if (err != nil) != tt.wantErr {
				t.Fatalf("NewMemory err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && len(m.shards) != tt.wantShards {
				t.Fatalf("shards = %d, want %d", len(m.shards), tt.wantShards)
			}
		})
	}
}

// TestMemoryRateBucketsOwnPool: rate-limit buckets fill a pool of their own. A flood of buckets
// (one per caller and tool name) fails only further buckets — with ErrFull, so the caller
// applies rateLimit.failClosed — and never the single-use nonces that confirmations need; a
// flood of nonces never switches rate limits off.
func TestMemoryRateBucketsOwnPool(t *testing.T) {
	h, m, _ := newMemoryHarness(t, MemoryOptions{MaxNonces: 4, MaxRateEntries: 2, Shards: 1})
	ctx := context.Background()
	limit := Limit{Rate: 1, Period: time.Minute}
	for i := range 2 {
		if d, err := h.store.Allow(ctx, fmt.Sprint("k", i), limit); err != nil || !d.Allowed {
			t.Fatalf("bucket %d: %+v, %v", i, d, err)
		}
	}
	if _, err := h.store.Allow(ctx, "k2", limit); !errors.Is(err, ErrFull) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("bucket over its pool: err = %v, want ErrFull and ErrUnavailable", err)
	}
	if d, err := h.store.Allow(ctx, "k0", limit); err != nil || d.Allowed {
		t.Fatalf("an existing bucket at the cap: %+v, %v; want a decision (limited)", d, err)
	}
	for i := range 4 {
		if first, err := h.store.UseOnce(ctx, fmt.Sprint("n", i), time.Hour); err != nil || !first {
			t.Fatalf("nonce %d with the bucket pool full: %v, %v", i, first, err)
		}
	}
	if _, err := h.store.UseOnce(ctx, "n4", time.Hour); !errors.Is(err, ErrFull) {
		t.Fatalf("nonce over its pool: err = %v, want ErrFull", err)
	}
	h.elapse(time.Minute) // the buckets are full again and expire; the nonces live on
	if d, err := h.store.Allow(ctx, "k2", limit); err != nil || !d.Allowed {
		t.Fatalf("bucket with the nonce pool full: %+v, %v; want allowed", d, err)
	}
	if nonces, buckets, values := m.FullErrors(); nonces != 1 || buckets != 1 || values != 0 {
		t.Fatalf("FullErrors = %d, %d, %d; want 1, 1, 0", nonces, buckets, values)
	}
	if n := m.Len(); n > 6 {
		t.Fatalf("Len = %d, want at most 4 + 2", n)
	}
}

// TestMemoryNoncesOwnPool: values (pending approvals, cached lists, legacy session state, pins)
// and single-use nonces fill pools of their own, so no amount of other state can make a
// confirmation's nonce fail, and a full nonce pool leaves values working.
func TestMemoryNoncesOwnPool(t *testing.T) {
	h, m, _ := newMemoryHarness(t, MemoryOptions{MaxNonces: 2, MaxValues: 3, Shards: 1})
	ctx := context.Background()
	for i := range 3 {
		if err := h.store.Set(ctx, fmt.Sprint("v", i), []byte("x"), time.Hour); err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
	}
	if err := h.store.Set(ctx, "v3", []byte("x"), time.Hour); !errors.Is(err, ErrFull) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("value over its pool: err = %v, want ErrFull and ErrUnavailable", err)
	}
	if ok, err := h.store.Hold(ctx, "alice", "a", 1, time.Hour, Budget{Count: 1, Bytes: 1}); !errors.Is(err, ErrFull) {
		t.Fatalf("hold with the value pool full: %v, %v; want ErrFull", ok, err)
	}
	for i := range 2 {
		if first, err := h.store.UseOnce(ctx, fmt.Sprint("n", i), time.Hour); err != nil || !first {
			t.Fatalf("nonce %d with the value pool full: %v, %v", i, first, err)
		}
	}
	if _, err := h.store.UseOnce(ctx, "n2", time.Hour); !errors.Is(err, ErrFull) {
		t.Fatalf("nonce over its pool: err = %v, want ErrFull", err)
	}
	if err := h.store.Delete(ctx, "v0"); err != nil {
		t.Fatal(err)
	}
	if err := h.store.Set(ctx, "v3", []byte("x"), time.Hour); err != nil {
		t.Fatalf("value after one was deleted, with the nonce pool full: %v", err)
	}
	if nonces, _, values := m.FullErrors(); nonces != 1 || values != 2 {
		t.Fatalf("FullErrors = %d nonces, %d values; want 1, 2", nonces, values)
	}
}

// TestMemoryValueBytesBounded: values are bounded by their bytes across all shards, not only by
// their number; overwriting, deleting and expiry give bytes back, wherever the expired values
// are.
func TestMemoryValueBytesBounded(t *testing.T) {
	const limit = 1 << 20
	h, m, _ := newMemoryHarness(t, MemoryOptions{MaxValueBytes: limit})
	ctx := context.Background()
	big := make([]byte, 300<<10)
	for i := range 3 {
		if err := h.store.Set(ctx, fmt.Sprint("big", i), big, time.Minute); err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
	}
	if err := h.store.Set(ctx, "big3", big, time.Minute); !errors.Is(err, ErrFull) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a value beyond the byte bound: err = %v, want ErrFull and ErrUnavailable", err)
	}
	if stored, _, err := h.store.SetNX(ctx, "big3", big, time.Minute); stored || !errors.Is(err, ErrFull) {
		t.Fatalf("SetNX beyond the byte bound: %v, %v; want ErrFull", stored, err)
	}
	if first, err := h.store.UseOnce(ctx, "nonce", time.Minute); err != nil || !first {
		t.Fatalf("nonce with the value bytes full: %v, %v", first, err)
	}
	if err := h.store.Set(ctx, "big0", big[:1000], time.Minute); err != nil {
		t.Fatalf("overwriting with a smaller value: %v", err)
	}
	if err := h.store.Set(ctx, "big3", big, time.Minute); err != nil {
		t.Fatalf("a value once an overwrite gave bytes back: %v", err)
	}
	if got := m.ValueBytes(); got > limit {
		t.Fatalf("ValueBytes = %d, over the bound %d", got, limit)
	}
	h.elapse(time.Minute)
	for i := range 3 {
		if err := h.store.Set(ctx, fmt.Sprint("new", i), big, time.Minute); err != nil {
			t.Fatalf("value %d after the others expired: %v", i, err)
		}
	}
	for i := range 3 {
		_ = h.store.Delete(ctx, fmt.Sprint("new", i))
	}
	if got := m.ValueBytes(); got > 4096 {
		t.Fatalf("ValueBytes = %d after deleting every value, want (almost) nothing", got)
	}
}
