package seal

import (
	"bytes"
	"errors"
	"testing"
)

// TestSealerUpTo: a sealer with its own bound seals and opens what is larger than the ring's
// bound, refuses what is larger than its own, and stays a sealer of its purpose: the ring's
// sealer of another purpose opens none of its tokens, nor it theirs.
func TestSealerUpTo(t *testing.T) {
	ring := mustRing(t, Config{Keys: []Key{testKey("k1", 1)}, MaxTokenBytes: 256})
	big := bytes.Repeat([]byte("a"), 1<<10)
	if _, err := ring.Sealer("p").Seal(big); !errors.Is(err, ErrOversized) {
		t.Fatalf("the ring's sealer sealed %d bytes past its bound: %v", len(big), err)
	}
	up := ring.SealerUpTo("p-large", 4<<10)
	tok, err := up.Seal(big)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := up.Open(tok); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("open: %v", err)
	}
	if _, err := up.Seal(bytes.Repeat([]byte("a"), 4<<10)); !errors.Is(err, ErrOversized) {
		t.Errorf("sealed past its own bound: %v", err)
	}
	small, err := ring.Sealer("p").Seal([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.Open(small); err == nil {
		t.Error("a token of another purpose opened")
	}
	if _, err := ring.SealerUpTo("p", 4<<10).Open(tok); err == nil {
		t.Error("a token opened under another purpose")
	}
}
