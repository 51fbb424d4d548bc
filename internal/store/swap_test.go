package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// contractSwap: a value is replaced only while it still holds what the writer read, so of two
// writers that read the same value one swaps and the other learns it came second (and reads
// again); the value keeps its expiry; a write sent again finds its own value and counts as
// swapped. A nil value is a compare-and-delete.
func contractSwap(t *testing.T, h harness) {
	ctx := context.Background()
	get := func(key string) string {
		t.Helper()
		v, ok, err := h.store.Get(ctx, key)
		if err != nil {
			t.Fatalf("Get(%q): %v", key, err)
		}
		if !ok {
			return "<none>"
		}
		return string(v)
	}
	if swapped, err := h.store.Swap(ctx, "absent", nil, []byte("x")); err != nil || swapped || get("absent") != "<none>" {
		t.Fatalf("Swap of an absent key = %v, %v, holds %q; want not swapped, nothing written", swapped, err, get("absent"))
	}
	if swapped, err := h.store.Swap(ctx, "absent", []byte(""), []byte("x")); err != nil || swapped || get("absent") != "<none>" {
		t.Fatalf("Swap of an absent key from \"\" = %v, %v, holds %q; want not swapped", swapped, err, get("absent"))
	}
	if stored, _, err := h.store.SetNX(ctx, "pin", []byte("v1"), 0); err != nil || !stored {
		t.Fatalf("SetNX: %v, %v", stored, err)
	}
	steps := []struct {
		name       string
		old, value string
		want       bool
		holds      string
	}{
		{"from what it holds", "v1", "v2", true, "v2"},
		{"from what it held before", "v1", "v3", false, "v2"},
		{"from a prefix", "v", "v3", false, "v2"},
		{"sent again after its answer was lost", "v1", "v2", true, "v2"},
		{"from the current value again", "v2", "v3", true, "v3"},
	}
	for _, s := range steps {
		swapped, err := h.store.Swap(ctx, "pin", []byte(s.old), []byte(s.value))
		if err != nil || swapped != s.want || get("pin") != s.holds {
			t.Fatalf("%s: Swap(%q → %q) = %v, %v, holds %q; want %v, holding %q", s.name, s.old, s.value, swapped, err, get("pin"), s.want, s.holds)
		}
	}
	// A nil value removes the key while it holds old, and only then (compare-and-delete).
	removals := []struct {
		name  string
		old   string
		want  bool
		holds string
	}{
		{"from a value it no longer holds", "v2", false, "v3"},
		{"from what it holds", "v3", true, "<none>"},
		{"sent again after its answer was lost", "v3", true, "<none>"},
	}
	for _, s := range removals {
		swapped, err := h.store.Swap(ctx, "pin", []byte(s.old), nil)
		if err != nil || swapped != s.want || get("pin") != s.holds {
			t.Fatalf("removal %s: Swap(%q → nil) = %v, %v, holds %q; want %v, holding %q", s.name, s.old, swapped, err, get("pin"), s.want, s.holds)
		}
	}
	if swapped, err := h.store.Swap(ctx, "pin-empty", nil, []byte{}); err != nil || swapped {
		t.Fatalf("Swap of an absent key to an empty value = %v, %v; want not swapped (an empty value is a value, not a removal)", swapped, err)
	}
	// The expiry stays the one the value was written with.
	const ttl = time.Second
	if err := h.store.Set(ctx, "short", []byte("a"), ttl); err != nil {
		t.Fatal(err)
	}
	if swapped, err := h.store.Swap(ctx, "short", []byte("a"), []byte("b")); err != nil || !swapped {
		t.Fatalf("Swap of a value with expiry = %v, %v", swapped, err)
	}
	h.elapse(ttl + 50*time.Millisecond)
	if got := get("short"); got != "<none>" {
		t.Fatalf("swapped value after its expiry: %q, want none", got)
	}
	if swapped, err := h.store.Swap(ctx, "short", []byte("b"), []byte("c")); err != nil || swapped {
		t.Fatalf("Swap of an expired value = %v, %v; want not swapped", swapped, err)
	}
	// Writers that all read the same value: exactly one swaps.
	const writers = 16
	for k := range 4 {
		key := fmt.Sprintf("race-%d", k)
		if stored, _, err := h.store.SetNX(ctx, key, []byte("read"), 0); err != nil || !stored {
			t.Fatalf("SetNX: %v, %v", stored, err)
		}
		var mu sync.Mutex
		var won []string
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range writers {
			wg.Go(func() {
				<-start
				v := fmt.Sprintf("w%d", i)
				swapped, err := h.store.Swap(ctx, key, []byte("read"), []byte(v))
				if err != nil {
					t.Errorf("Swap: %v", err)
					return
				}
				if swapped {
					mu.Lock()
					won = append(won, v)
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		if len(won) != 1 || get(key) != won[0] {
			t.Fatalf("%s: swapped by %v, holds %q; want one writer, whose value it holds", key, won, get(key))
		}
	}
}
