package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// contractRecordsExpire: a record lives Idle after its last use (a read, a put or a swap) and
// at most Absolute after its put, used or not; an expired record is absent to every reader
// and counted nowhere.
func contractRecordsExpire(t *testing.T, h harness) {
	r := h.store.(Records)
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	at := func(d time.Duration) RecordLife {
		return RecordLife{Now: t0.Add(d), Idle: time.Hour, Absolute: 3 * time.Hour}
	}
	b := Budget{Count: 3, Bytes: 64}
	for _, o := range []string{"used", "unused", "swapped"} {
		if ok, err := r.PutRecord(ctx, o, "n", []byte("v-"+o), b, at(0)); err != nil || !ok {
			t.Fatalf("PutRecord(%s): %v %v", o, ok, err)
		}
	}
	live := func(owner string, d time.Duration) bool {
		t.Helper()
		_, ok, err := r.GetRecord(ctx, owner, "n", at(d))
		if err != nil {
			t.Fatalf("GetRecord(%s) at +%s: %v", owner, d, err)
		}
		return ok
	}
	if n, err := r.CountRecords(ctx, "n", at(0)); err != nil || n != 3 {
		t.Fatalf("CountRecords = %d %v, want 3", n, err)
	}
	// Used every 50 minutes: lives on, each read moving its idle deadline; the swapped one is
	// used once, by a swap.
	if !live("used", 50*time.Minute) {
		t.Fatal("a record read within Idle expired")
	}
	if ok, err := r.SwapRecord(ctx, "swapped", "n", []byte("v-swapped"), []byte("v-swapped2"), at(50*time.Minute)); err != nil || !ok {
		t.Fatalf("SwapRecord: %v %v", ok, err)
	}
	// +100m: the unused record went (idle), the swapped one lives (a swap is a use).
	if got, err := r.OwnerRecords(ctx, "unused", at(100*time.Minute)); err != nil || len(got) != 0 {
		t.Errorf("OwnerRecords of a record unused past Idle: %q %v", got, err)
	}
	if n, err := r.CountRecords(ctx, "n", at(100*time.Minute)); err != nil || n != 2 {
		t.Errorf("CountRecords after one record's idle deadline = %d %v, want 2", n, err)
	}
	if live("unused", 100*time.Minute) {
		t.Error("a record unused past Idle was read")
	}
	if !live("used", 100*time.Minute) {
		t.Fatal("a record read every 50 minutes expired")
	}
	if got, err := r.OwnerRecords(ctx, "swapped", at(100*time.Minute)); err != nil || string(got["n"]) != "v-swapped2" {
		t.Errorf("a record swapped 50 minutes before: %q %v", got, err)
	}
	if !live("used", 150*time.Minute) {
		t.Fatal("a record read every 50 minutes expired")
	}
	var listed []string
	if err := r.NameOwners(ctx, "n", at(160*time.Minute), func(o []string) error { listed = append(listed, o...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0] != "used" {
		t.Errorf("NameOwners at +160m listed %v, want [used]", listed)
	}
	// Past Absolute: gone however much it was used, and its swap is refused.
	if live("used", 3*time.Hour+time.Minute) {
		t.Error("a record read past its absolute deadline")
	}
	if ok, _ := r.SwapRecord(ctx, "used", "n", []byte("v-used"), []byte("x"), at(3*time.Hour+time.Minute)); ok {
		t.Error("a record past its absolute deadline was swapped")
	}
	if n, _ := r.CountRecords(ctx, "n", at(4*time.Hour)); n != 0 {
		t.Errorf("CountRecords past every deadline = %d", n)
	}
	// An expired record does not count against its owner's budget, nor stop AddRecord.
	one := Budget{Count: 1, Bytes: 64}
	if ok, err := r.PutRecord(ctx, "full", "a", []byte("x"), one, at(0)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if ok, err := r.AddRecord(ctx, "full", "b", []byte("y"), one, at(2*time.Hour)); err != nil || !ok {
		t.Errorf("a put beside an expired record: %v %v", ok, err)
	}
	if ok, err := r.AddRecord(ctx, "full", "b", []byte("z"), one, at(4*time.Hour)); err != nil || !ok {
		t.Errorf("AddRecord over an expired record: %v %v", ok, err)
	}
}

// TestMemoryRecordsSwept: the records nobody meets again (callers who never come back) leave
// the memory store by themselves, their bytes given back to the value pool.
func TestMemoryRecordsSwept(t *testing.T) {
	h, m, _ := newMemoryHarness(t, MemoryOptions{})
	r := h.store.(Records)
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	life := RecordLife{Now: t0, Idle: time.Hour, Absolute: 3 * time.Hour}
	for i := range 100 {
		if ok, err := r.PutRecord(ctx, fmt.Sprint("gone-", i), "n", make([]byte, 100), Budget{Count: 1, Bytes: 100}, life); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	life.Now = t0.Add(2 * time.Hour)
	if ok, err := r.PutRecord(ctx, "back", "n", []byte("v"), Budget{Count: 1, Bytes: 100}, life); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if got := m.bytes.Load(); got != 1+recordOverhead {
		t.Errorf("the value pool holds %d bytes, want only the live record's %d", got, 1+recordOverhead)
	}
	m.rec.mu.Lock()
	owners, index := len(m.rec.owners), len(m.rec.names["n"])
	m.rec.mu.Unlock()
	if owners != 1 || index != 1 {
		t.Errorf("after the sweep: %d owners, %d index entries; want 1 and 1", owners, index)
	}
}
