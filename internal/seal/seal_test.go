package seal

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func testKey(id string, fill byte) Key {
	return Key{ID: id, Secret: bytes.Repeat([]byte{fill}, MinSecretBytes)}
}

func mustRing(t testing.TB, cfg Config) *KeyRing {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr int // number of problems reported
	}{
		{"ok", Config{Keys: []Key{testKey("k1", 1)}}, 0},
		{"ok two keys", Config{Keys: []Key{testKey("a", 1), testKey("b-2_X", 2)}, MaxTokenBytes: 100}, 0},
		{"no keys", Config{}, 1},
		{"short secret", Config{Keys: []Key{{ID: "k", Secret: make([]byte, MinSecretBytes-1)}}}, 1},
		{"empty id", Config{Keys: []Key{testKey("", 1)}}, 1},
		{"dot in id", Config{Keys: []Key{testKey("a.b", 1)}}, 1},
		{"long id", Config{Keys: []Key{testKey(strings.Repeat("a", MaxKeyIDBytes+1), 1)}}, 1},
		{"duplicate id", Config{Keys: []Key{testKey("k", 1), testKey("k", 2)}}, 1},
		{"negative max", Config{Keys: []Key{testKey("k", 1)}, MaxTokenBytes: -1}, 1},
		{"all at once", Config{Keys: []Key{{ID: "a b"}, {ID: "c"}}, MaxTokenBytes: -1}, 4},
		{"open-only new key", Config{Keys: []Key{testKey("a", 1), {ID: "b", Secret: testKey("b", 2).Secret, OpenOnly: true}}}, 0},
		{"every key open-only", Config{Keys: []Key{{ID: "a", Secret: testKey("a", 1).Secret, OpenOnly: true}}}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			got := 0
			if err != nil {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
				}
				got = len(err.(interface{ Unwrap() []error }).Unwrap())
			}
			if got != tc.wantErr {
				t.Fatalf("got %d problems (%v), want %d", got, err, tc.wantErr)
			}
			if _, nerr := New(tc.cfg); (nerr == nil) != (tc.wantErr == 0) {
				t.Fatalf("New error = %v, want error: %v", nerr, tc.wantErr > 0)
			}
		})
	}
}

func TestNewCopiesSecrets(t *testing.T) {
	k := testKey("k", 7)
	r := mustRing(t, Config{Keys: []Key{k}})
	tok, err := r.Sealer(PurposeCursor).Seal([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	k.Secret[0] ^= 1 // the caller wiping its copy must not change the ring
	if _, err := mustRing(t, Config{Keys: []Key{testKey("k", 7)}}).Sealer(PurposeCursor).Open(tok); err != nil {
		t.Fatalf("ring built from same secret cannot open: %v", err)
	}
	if _, err := r.Sealer(PurposeCursor).Open(tok); err != nil {
		t.Fatalf("ring changed after caller mutated its secret: %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	s := mustRing(t, Config{Keys: []Key{testKey("k1", 1)}}).Sealer(PurposeRequestState)
	for _, pt := range [][]byte{nil, []byte("a"), bytes.Repeat([]byte{0xff}, 1000)} {
		tok, err := s.Seal(pt)
		if err != nil {
			t.Fatalf("Seal(%d bytes): %v", len(pt), err)
		}
		if !strings.HasPrefix(tok, "v1.k1.") {
			t.Fatalf("token %q lacks version and key id", tok)
		}
		got, err := s.Open(tok)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if !bytes.Equal(got, pt) {
			t.Fatalf("round trip changed plaintext: got %x want %x", got, pt)
		}
		again, _ := s.Seal(pt)
		if again == tok {
			t.Fatal("two seals of the same plaintext are identical; nonce not random")
		}
	}
}

func TestRotation(t *testing.T) {
	old := testKey("2026-10", 1)
	cur := testKey("2026-11", 2)
	before := mustRing(t, Config{Keys: []Key{old}}).Sealer(PurposeRequestState)
	during := mustRing(t, Config{Keys: []Key{old, cur}}).Sealer(PurposeRequestState)
	after := mustRing(t, Config{Keys: []Key{cur}}).Sealer(PurposeRequestState)

	oldTok, _ := before.Seal([]byte("in flight"))
	if _, err := during.Open(oldTok); err != nil {
		t.Fatalf("token from the old key does not open after adding a key: %v", err)
	}
	newTok, _ := during.Seal([]byte("new"))
	if !strings.HasPrefix(newTok, "v1.2026-11.") {
		t.Fatalf("the last key must seal; got %q", newTok)
	}
	if _, err := after.Open(newTok); err != nil {
		t.Fatalf("new token does not open after removing the old key: %v", err)
	}
	if _, err := after.Open(oldTok); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("removed key: got %v, want ErrUnknownKey", err)
	}
}

// TestRotationAcrossReplicas: the three steps of a rotation while replicas of two steps serve
// at once (a rolling update). Whatever a replica of one step seals, a replica of the step
// before or after opens: an open-only key is held by every replica before any seals with it.
// Appending the new key as a sealing one in one step is what fails, shown last.
func TestRotationAcrossReplicas(t *testing.T) {
	old, cur := testKey("2026-10", 1), testKey("2026-11", 2)
	openOnly := cur
	openOnly.OpenOnly = true
	steps := [][]Key{{old}, {old, openOnly}, {old, cur}, {cur}}
	sealer := func(keys []Key) *Sealer { return mustRing(t, Config{Keys: keys}).Sealer(PurposeRequestState) }
	for i := 0; i+1 < len(steps); i++ {
		a, b := sealer(steps[i]), sealer(steps[i+1])
		for _, pair := range [][2]*Sealer{{a, b}, {b, a}} {
			tok, err := pair[0].Seal([]byte("in flight"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pair[1].Open(tok); err != nil {
				t.Errorf("steps %d and %d: a token sealed by one (%.11s…) does not open on the other: %v", i, i+1, tok, err)
			}
		}
	}
	if tok, _ := sealer(steps[1]).Seal(nil); !strings.HasPrefix(tok, "v1.2026-10.") {
		t.Errorf("an open-only key sealed: %.11s…", tok)
	}
	if id := mustRing(t, Config{Keys: steps[1]}).SealingKeyID(); id != "2026-10" {
		t.Errorf("SealingKeyID = %q, want the last key that is not open-only", id)
	}
	// Adding the new key as the sealing one at once: a replica not yet updated cannot open.
	tok, _ := sealer(steps[2]).Seal(nil)
	if _, err := sealer(steps[0]).Open(tok); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("the one-step rotation: got %v, want ErrUnknownKey on a replica not yet updated", err)
	}
}

func TestSameIDOtherSecretIsTampered(t *testing.T) {
	a := mustRing(t, Config{Keys: []Key{testKey("k", 1)}}).Sealer(PurposeCursor)
	b := mustRing(t, Config{Keys: []Key{testKey("k", 2)}}).Sealer(PurposeCursor)
	tok, _ := a.Seal([]byte("x"))
	if _, err := b.Open(tok); !errors.Is(err, ErrTampered) {
		t.Fatalf("got %v, want ErrTampered", err)
	}
}

func TestPurposesDoNotCross(t *testing.T) {
	r := mustRing(t, Config{Keys: []Key{testKey("k", 1)}})
	state, cursor := r.Sealer(PurposeRequestState), r.Sealer(PurposeCursor)
	tok, _ := cursor.Seal([]byte("page 2"))
	if _, err := state.Open(tok); !errors.Is(err, ErrTampered) {
		t.Fatalf("cursor opened as request state: %v", err)
	}
	if _, err := cursor.Open(tok); err != nil {
		t.Fatalf("cursor does not open as cursor: %v", err)
	}
}

func TestEveryByteFlipFails(t *testing.T) {
	s := mustRing(t, Config{Keys: []Key{testKey("k1", 1), testKey("k2", 2)}}).Sealer(PurposeRequestState)
	tok, _ := s.Seal([]byte(`{"sub":"alice"}`))
	for i := 0; i < len(tok); i++ {
		for _, mask := range []byte{0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80} {
			b := []byte(tok)
			b[i] ^= mask
			if pt, err := s.Open(string(b)); err == nil {
				t.Fatalf("flipping byte %d with %#x still opens: %q", i, mask, pt)
			}
		}
	}
}

func TestTruncationFails(t *testing.T) {
	s := mustRing(t, Config{Keys: []Key{testKey("k1", 1)}}).Sealer(PurposeRequestState)
	tok, _ := s.Seal([]byte("payload"))
	for n := 0; n < len(tok); n++ {
		if _, err := s.Open(tok[:n]); err == nil {
			t.Fatalf("token truncated to %d bytes opens", n)
		}
		if _, err := s.Open(tok[n+1:]); err == nil {
			t.Fatalf("token with %d leading bytes cut opens", n+1)
		}
	}
	if _, err := s.Open(tok + "A"); err == nil {
		t.Fatal("token with an extra byte opens")
	}
}

func TestOpenErrors(t *testing.T) {
	s := mustRing(t, Config{Keys: []Key{testKey("k1", 1)}, MaxTokenBytes: 200}).Sealer(PurposeCursor)
	good, _ := s.Seal([]byte("x"))
	body := strings.TrimPrefix(good, "v1.k1.")
	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"empty", "", ErrMalformed},
		{"other version", "v2.k1." + body, ErrMalformed},
		{"no body separator", "v1.k1", ErrMalformed},
		{"empty kid", "v1.." + body, ErrMalformed},
		{"bad kid chars", "v1.k!." + body, ErrMalformed},
		{"unknown kid", "v1.k2." + body, ErrUnknownKey},
		{"padding", good + "==", ErrMalformed},
		{"newline in body", "v1.k1." + body[:4] + "\n" + body[4:], ErrMalformed},
		{"short body", "v1.k1.AAAA", ErrMalformed},
		{"std alphabet", "v1.k1.++++" + body[4:], ErrMalformed},
		{"oversized", "v1.k1." + strings.Repeat("A", 200), ErrOversized},
		// Oversize is decided before parsing, so even garbage reports it.
		{"oversized garbage", strings.Repeat("\x00", 201), ErrOversized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Open(tc.token)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSealOversized(t *testing.T) {
	s := mustRing(t, Config{Keys: []Key{testKey("k1", 1)}, MaxTokenBytes: 100}).Sealer(PurposeCursor)
	if _, err := s.Seal(make([]byte, 100)); !errors.Is(err, ErrOversized) {
		t.Fatalf("got %v, want ErrOversized", err)
	}
	tok, err := s.Seal(make([]byte, 10))
	if err != nil || len(tok) > s.MaxTokenBytes() {
		t.Fatalf("small seal: len %d err %v", len(tok), err)
	}
}
