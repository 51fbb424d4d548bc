package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// contractHold: a budget holds at most Count items weighing at most Bytes together; an item held
// again replaces its earlier hold; released or expired items free their share; budgets of
// different keys are independent; bad arguments are refused.
func contractHold(t *testing.T, h harness) {
	ctx := context.Background()
	const ttl = time.Second
	b := Budget{Count: 3, Bytes: 100}
	hold := func(key, item string, size int64, want bool) {
		t.Helper()
		ok, err := h.store.Hold(ctx, key, item, size, ttl, b)
		if err != nil || ok != want {
			t.Fatalf("Hold(%s, %s, %d) = %v, %v; want %v", key, item, size, ok, err, want)
		}
	}
	hold("alice", "a", 40, true)
	hold("alice", "b", 40, true)
	hold("alice", "c", 30, false) // 110 bytes
	hold("alice", "c", 20, true)
	hold("alice", "d", 1, false) // a fourth item
	hold("bob", "a", 100, true)  // another budget
	hold("alice", "a", 10, true) // a again, smaller: 70 bytes now
	hold("alice", "d", 1, false) // still three items
	if err := h.store.Release(ctx, "alice", "b"); err != nil {
		t.Fatal(err)
	}
	if err := h.store.Release(ctx, "alice", "never-held"); err != nil {
		t.Fatal(err)
	}
	hold("alice", "d", 70, true) // 10 + 20 + 70
	hold("alice", "e", 1, false)
	h.elapse(ttl + 20*time.Millisecond)
	hold("alice", "e", 100, true) // everything earlier expired
	for _, bad := range []struct {
		size int64
		ttl  time.Duration
		b    Budget
		err  error
	}{
		{-1, ttl, b, ErrInvalidBudget}, {1, ttl, Budget{Count: 0, Bytes: 10}, ErrInvalidBudget},
		{1, ttl, Budget{Count: 1, Bytes: 0}, ErrInvalidBudget}, {1, 0, b, ErrInvalidTTL},
	} {
		if _, err := h.store.Hold(ctx, "carol", "x", bad.size, bad.ttl, bad.b); !errors.Is(err, bad.err) {
			t.Errorf("Hold(size %d, ttl %v, %+v) err = %v, want %v", bad.size, bad.ttl, bad.b, err, bad.err)
		}
	}
}

// contractHoldConcurrent: holds taken at once never exceed the budget.
func contractHoldConcurrent(t *testing.T, h harness) {
	ctx := context.Background()
	const n = 32
	var wg sync.WaitGroup
	var mu sync.Mutex
	held := 0
	for i := range n {
		wg.Go(func() {
			ok, err := h.store.Hold(ctx, "alice", fmt.Sprint("item", i), 10, time.Minute, Budget{Count: 5, Bytes: 1000})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				held++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if held != 5 {
		t.Fatalf("%d of %d concurrent holds granted, want exactly 5", held, n)
	}
}

// contractDelete: a deleted value is gone at once; deleting what is not there does nothing.
func contractDelete(t *testing.T, h harness) {
	ctx := context.Background()
	if err := h.store.Set(ctx, "v", []byte("x"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := h.store.Delete(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := h.store.Get(ctx, "v"); err != nil || ok {
		t.Fatalf("Get after Delete: found=%v err=%v", ok, err)
	}
	if err := h.store.Delete(ctx, "never-set"); err != nil {
		t.Fatal(err)
	}
}
