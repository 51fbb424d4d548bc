package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// contractSetNX: the first writer wins, within the process and across replicas sharing a
// Redis, and every later writer learns the winner's value (trust-on-first-use pins rely on it).
func contractSetNX(t *testing.T, h harness) {
	ctx := context.Background()
	stored, cur, err := h.store.SetNX(ctx, "pin", []byte("first"), 0)
	if err != nil || !stored || cur != nil {
		t.Fatalf("first SetNX = %v, %q, %v; want stored", stored, cur, err)
	}
	stored, cur, err = h.store.SetNX(ctx, "pin", []byte("second"), 0)
	if err != nil || stored || !bytes.Equal(cur, []byte("first")) {
		t.Fatalf("second SetNX = %v, %q, %v; want not stored, current \"first\"", stored, cur, err)
	}
	// The value the key holds, written again, counts as stored (a retried write's own).
	if stored, cur, err := h.store.SetNX(ctx, "pin", []byte("first"), 0); err != nil || !stored || cur != nil {
		t.Fatalf("SetNX of the value held = %v, %q, %v; want stored", stored, cur, err)
	}
	if got, ok, err := h.store.Get(ctx, "pin"); err != nil || !ok || string(got) != "first" {
		t.Fatalf("Get after SetNX = %q, %v, %v; want \"first\"", got, ok, err)
	}
	// A TTL expires the value like Set's, after which the next writer wins.
	const ttl = time.Second
	if stored, _, err := h.store.SetNX(ctx, "short", []byte("a"), ttl); err != nil || !stored {
		t.Fatalf("SetNX with ttl = %v, %v", stored, err)
	}
	h.elapse(ttl + 50*time.Millisecond)
	if stored, cur, err := h.store.SetNX(ctx, "short", []byte("b"), ttl); err != nil || !stored {
		t.Fatalf("SetNX after expiry = %v, %q, %v; want stored", stored, cur, err)
	}
	if _, _, err := h.store.SetNX(ctx, "neg", []byte("x"), -time.Second); !errors.Is(err, ErrInvalidTTL) {
		t.Errorf("SetNX(ttl<0) err = %v, want ErrInvalidTTL", err)
	}
	// Concurrent writers: exactly one stores, and every other one reads the winner's value.
	const goroutines = 16
	for k := range 4 {
		key := fmt.Sprintf("race-%d", k)
		var mu sync.Mutex
		winners, seen := 0, map[string]int{}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range goroutines {
			wg.Go(func() {
				<-start
				v := fmt.Sprintf("v%d", i)
				stored, cur, err := h.store.SetNX(ctx, key, []byte(v), 0)
				if err != nil {
					t.Errorf("SetNX: %v", err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if stored {
					winners++
					seen[v]++
				} else {
					seen[string(cur)]++
				}
			})
		}
		close(start)
		wg.Wait()
		if winners != 1 || len(seen) != 1 {
			t.Fatalf("%s: %d winners, values seen %v; want one winner whose value everyone saw", key, winners, seen)
		}
	}
}
