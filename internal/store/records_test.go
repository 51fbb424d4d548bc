package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// contractRecords is what every Records must do: bounded per owner, replaced and removed only
// while unchanged, listed and counted per name.
func contractRecords(t *testing.T, h harness) {
	r, ok := h.store.(Records)
	if !ok {
		t.Fatalf("%T does not implement Records", h.store)
	}
	ctx := context.Background()
	b := Budget{Count: 2, Bytes: 10}
	put := func(owner, name, value string) bool {
		t.Helper()
		ok, err := r.PutRecord(ctx, owner, name, []byte(value), b, testLife)
		if err != nil {
			t.Fatalf("PutRecord(%s, %s): %v", owner, name, err)
		}
		return ok
	}
	get := func(owner, name string) (string, bool) {
		t.Helper()
		v, ok, err := r.GetRecord(ctx, owner, name, testLife)
		if err != nil {
			t.Fatalf("GetRecord(%s, %s): %v", owner, name, err)
		}
		return string(v), ok
	}
	if _, ok := get("o1", "a"); ok {
		t.Fatal("an empty store has a record")
	}
	if !put("o1", "a", "1234") || !put("o1", "b", "12345") {
		t.Fatal("records within the budget were refused")
	}
	if put("o1", "c", "1") {
		t.Error("a third record was stored over a budget of two")
	}
	if put("o1", "a", "1234567") {
		t.Error("a replacement over the owner's bytes was stored")
	}
	if !put("o1", "a", "12345") {
		t.Error("a replacement within the bytes was refused")
	}
	if v, ok := get("o1", "a"); !ok || v != "12345" {
		t.Errorf("record a = %q %v", v, ok)
	}
	if _, err := r.PutRecord(ctx, "o1", "a", []byte("12345678901"), b, testLife); !errors.Is(err, ErrRecordTooLarge) {
		t.Errorf("a record larger than the budget: %v", err)
	}
	if !put("o2", "a", "x") {
		t.Fatal("another owner's record refused")
	}
	if n, err := r.CountRecords(ctx, "a", testLife); err != nil || n != 2 {
		t.Errorf("CountRecords(a) = %d %v, want 2", n, err)
	}
	// AddRecord stores only where there is no record, within the same budget.
	if ok, err := r.AddRecord(ctx, "o2", "a", []byte("y"), b, testLife); ok || !errors.Is(err, ErrRecordExists) {
		t.Errorf("AddRecord over a record: %v %v", ok, err)
	}
	if v, _ := get("o2", "a"); v != "x" {
		t.Errorf("AddRecord over a record changed it: %q", v)
	}
	if ok, err := r.AddRecord(ctx, "o1", "c", []byte("1"), b, testLife); ok || err != nil {
		t.Errorf("AddRecord over the budget: %v %v", ok, err)
	}
	if ok, err := r.AddRecord(ctx, "o2", "b", []byte("y"), b, testLife); !ok || err != nil {
		t.Errorf("AddRecord of a new record: %v %v", ok, err)
	}
	if ok, err := r.DeleteRecord(ctx, "o2", "b", nil); !ok || err != nil {
		t.Errorf("delete of the added record: %v %v", ok, err)
	}

	// Swap and conditional delete act only on what the caller read.
	if ok, err := r.SwapRecord(ctx, "o1", "a", []byte("stale"), []byte("new"), testLife); err != nil || ok {
		t.Errorf("swap of a stale value: %v %v", ok, err)
	}
	if ok, err := r.SwapRecord(ctx, "o1", "a", []byte("12345"), []byte("new"), testLife); err != nil || !ok {
		t.Errorf("swap of the current value: %v %v", ok, err)
	}
	if ok, err := r.SwapRecord(ctx, "o3", "a", []byte("x"), []byte("y"), testLife); err != nil || ok {
		t.Errorf("swap of an absent record: %v %v", ok, err)
	}
	// A write finding its own value (its earlier attempt's, TestWriteSurvivesARetriedStall)
	// succeeded, on either store.
	if ok, err := r.SwapRecord(ctx, "o1", "a", []byte("12345"), []byte("new"), testLife); err != nil || !ok {
		t.Errorf("swap to the value the record holds: %v %v", ok, err)
	}
	if ok, err := r.AddRecord(ctx, "o2", "a", []byte("x"), b, testLife); err != nil || !ok {
		t.Errorf("AddRecord of the value the record holds: %v %v", ok, err)
	}
	if ok, err := r.DeleteRecord(ctx, "o1", "a", []byte("12345")); err != nil || ok {
		t.Errorf("delete of a stale value: %v %v", ok, err)
	}
	if v, _ := get("o1", "a"); v != "new" {
		t.Errorf("after a refused delete: %q", v)
	}
	all, err := r.OwnerRecords(ctx, "o1", testLife)
	if err != nil || len(all) != 2 || string(all["a"]) != "new" || string(all["b"]) != "12345" {
		t.Errorf("OwnerRecords(o1) = %q %v", all, err)
	}
	if ok, err := r.DeleteRecord(ctx, "o1", "a", []byte("new")); err != nil || !ok {
		t.Errorf("delete of the current value: %v %v", ok, err)
	}
	if ok, err := r.DeleteRecord(ctx, "o1", "a", nil); err != nil || ok {
		t.Errorf("second delete: %v %v", ok, err)
	}
	if n, _ := r.CountRecords(ctx, "a", testLife); n != 1 {
		t.Errorf("CountRecords(a) after a delete = %d, want 1", n)
	}
	// The freed slot takes a new record.
	if !put("o1", "c", "1") {
		t.Error("a record in a freed slot was refused")
	}
	if ok, err := r.DeleteRecord(ctx, "o1", "b", nil); err != nil || !ok {
		t.Errorf("unconditional delete: %v %v", ok, err)
	}
	contractNameOwners(t, r)
}

// contractNameOwners lists many owners in batches and deletes them while listing.
func contractNameOwners(t *testing.T, r Records) {
	ctx := context.Background()
	const n = 600
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range n {
		wg.Go(func() {
			if ok, err := r.PutRecord(ctx, fmt.Sprintf("owner-%d", i), "many", []byte("v"), Budget{Count: 4, Bytes: 64}, testLife); err != nil || !ok {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d concurrent puts failed", failed.Load())
	}
	if c, err := r.CountRecords(ctx, "many", testLife); err != nil || c != n {
		t.Fatalf("CountRecords = %d %v, want %d", c, err, n)
	}
	var seen []string
	err := r.NameOwners(ctx, "many", testLife, func(owners []string) error {
		for _, o := range owners {
			if _, err := r.DeleteRecord(ctx, o, "many", nil); err != nil {
				return err
			}
		}
		seen = append(seen, owners...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(seen)
	seen = slices.Compact(seen)
	if len(seen) != n {
		t.Errorf("NameOwners listed %d distinct owners, want %d", len(seen), n)
	}
	if c, _ := r.CountRecords(ctx, "many", testLife); c != 0 {
		t.Errorf("after deleting every listed owner, %d remain", c)
	}
	stop := errors.New("stop")
	_, _ = r.PutRecord(ctx, "o", "one", []byte("v"), Budget{Count: 1, Bytes: 8}, testLife)
	if err := r.NameOwners(ctx, "one", testLife, func([]string) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("NameOwners did not return fn's error: %v", err)
	}
}

// TestMemoryRecordSwapBounded: a record that grows by a swap counts against MaxValueBytes as a
// put does, so refreshes cannot take the value pool past its bound; a shrink gives bytes back.
func TestMemoryRecordSwapBounded(t *testing.T) {
	const limit = 1 << 10
	h, m, _ := newMemoryHarness(t, MemoryOptions{MaxValueBytes: limit})
	r := h.store.(Records)
	ctx := context.Background()
	b := Budget{Count: 1, Bytes: limit}
	small, big := make([]byte, 100), make([]byte, limit)
	if ok, err := r.PutRecord(ctx, "o", "a", small, b, testLife); err != nil || !ok {
		t.Fatalf("PutRecord: %v, %v", ok, err)
	}
	before := m.bytes.Load()
	if ok, err := r.SwapRecord(ctx, "o", "a", small, big, testLife); ok || !errors.Is(err, ErrFull) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a swap past the byte bound: %v, %v; want false, ErrFull and ErrUnavailable", ok, err)
	}
	if got := m.bytes.Load(); got != before {
		t.Fatalf("a refused swap moved the pool: %d bytes, want %d", got, before)
	}
	if v, _, _ := r.GetRecord(ctx, "o", "a", testLife); len(v) != len(small) {
		t.Fatalf("a refused swap changed the record: %d bytes, want %d", len(v), len(small))
	}
	if ok, err := r.SwapRecord(ctx, "o", "a", small, small[:10], testLife); err != nil || !ok {
		t.Fatalf("a shrinking swap: %v, %v", ok, err)
	}
	if got := m.bytes.Load(); got != before-90 {
		t.Fatalf("a shrinking swap: pool %d bytes, want %d", got, before-90)
	}
}

// TestMemoryValueBytesExactUnderRace: records and plain values take their bytes from one
// budget under different locks; however their writers interleave, the pool never holds more
// than MaxValueBytes, and exactly as many writes fit as the budget allows.
func TestMemoryValueBytesExactUnderRace(t *testing.T) {
	var counter atomic.Int64
	var fitted atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5000 {
				if takeBytes(&counter, 1, 1000) {
					fitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if fitted.Load() != 1000 || counter.Load() != 1000 {
		t.Fatalf("%d takes of one byte fitted a budget of 1000, counter %d", fitted.Load(), counter.Load())
	}

	const limit = 64 << 10
	h, m, _ := newMemoryHarness(t, MemoryOptions{MaxValueBytes: limit})
	r := h.store.(Records)
	ctx := context.Background()
	val := make([]byte, 1000)
	for i := range 16 {
		wg.Go(func() {
			for j := range 40 {
				owner := fmt.Sprintf("o%d-%d", i, j)
				if i%2 == 0 {
					_, _ = r.PutRecord(ctx, owner, "n", val, Budget{Count: 4, Bytes: 4 << 10}, testLife)
				} else {
					_ = h.store.Set(ctx, owner, val, time.Minute)
				}
				if got := m.ValueBytes(); got > limit {
					t.Errorf("the pool holds %d bytes past its bound of %d", got, limit)
				}
			}
		})
	}
	wg.Wait()
	if got := m.ValueBytes(); got > limit || got < limit-2*int64(len(val))-2*recordOverhead {
		t.Errorf("the pool holds %d bytes with writers refused; its bound is %d", got, limit)
	}
}

// testLife is the lifetimes of the contract's records: long enough that none expires.
var testLife = RecordLife{Now: time.Unix(1_800_000_000, 0), Idle: time.Hour, Absolute: 2 * time.Hour}
