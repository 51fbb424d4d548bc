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

// TestSealedLen: SealedLen is the length of what Seal makes of a plaintext under the longest key
// id, for every plaintext length across the base64 groups, so a sealer bounded by SealedLen(n)
// seals every plaintext of n bytes and none of n+1 under that key.
func TestSealedLen(t *testing.T) {
	long := string(bytes.Repeat([]byte("k"), MaxKeyIDBytes))
	ring := mustRing(t, Config{Keys: []Key{testKey(long, 1)}, MaxTokenBytes: 1 << 10})
	for n := range 64 {
		tok, err := ring.Sealer("p").Seal(make([]byte, n))
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) != SealedLen(n) {
			t.Errorf("%d bytes sealed to %d, SealedLen says %d", n, len(tok), SealedLen(n))
		}
	}
	up := ring.SealerUpTo("p", SealedLen(100))
	if _, err := up.Seal(make([]byte, 100)); err != nil {
		t.Errorf("a sealer bounded by SealedLen(100) refused 100 bytes: %v", err)
	}
	if _, err := up.Seal(make([]byte, 101)); !errors.Is(err, ErrOversized) {
		t.Errorf("a sealer bounded by SealedLen(100) sealed 101 bytes: %v", err)
	}
}
