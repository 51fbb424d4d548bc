package dpop

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
)

func testRing(t *testing.T, id string) *seal.KeyRing {
	t.Helper()
	r, err := seal.New(seal.Config{Keys: []seal.Key{{ID: id, Secret: []byte(strings.Repeat(id, 32))}}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNonces: a nonce opens on any Nonces of the same ring until its lifetime ends; a forged,
// foreign, future or expired one does not; its value is 1*NQCHAR.
func TestNonces(t *testing.T) {
	a, err := NewNonces(testRing(t, "k1"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewNonces(testRing(t, "k1"), time.Minute) // another replica, same keys
	foreign, _ := NewNonces(testRing(t, "k2"), time.Minute)
	n, err := a.Issue(testNow)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			t.Fatalf("nonce %q has %q, not NQCHAR", n, c)
		}
	}
	if issued, ok := b.Check(n, testNow.Add(59*time.Second)); !ok || !issued.Equal(testNow) {
		t.Errorf("the other replica refused a live nonce: %v %v", issued, ok)
	}
	for name, check := range map[string]func() bool{
		"expired":         func() bool { _, ok := a.Check(n, testNow.Add(61*time.Second)); return ok },
		"from the future": func() bool { m, _ := a.Issue(testNow.Add(time.Hour)); _, ok := a.Check(m, testNow); return ok },
		"other keys":      func() bool { _, ok := foreign.Check(n, testNow); return ok },
		"forged":          func() bool { _, ok := a.Check("definitely-not-the-server-nonce", testNow); return ok },
		"tampered": func() bool {
			// One character in the middle, always to another one (the last characters of base64
			// carry few bits and may already be the replacement).
			b := []byte(n)
			if b[len(b)/2] == 'A' {
				b[len(b)/2] = 'B'
			} else {
				b[len(b)/2] = 'A'
			}
			_, ok := a.Check(string(b), testNow)
			return ok
		},
		"oversized": func() bool { _, ok := a.Check(strings.Repeat("a", 300), testNow); return ok },
	} {
		if check() {
			t.Errorf("%s nonce accepted", name)
		}
	}
	if !a.Stale(testNow, testNow.Add(31*time.Second)) || a.Stale(testNow, testNow.Add(29*time.Second)) {
		t.Error("Stale is not half the lifetime")
	}
	if _, err := NewNonces(testRing(t, "k1"), 2*time.Hour); err == nil {
		t.Error("a two-hour lifetime was accepted")
	}
}

// TestVerifyNonce: with nonces required a proof without one, with an expired one or with a forged
// one is use_dpop_nonce; with a live one it verifies and says when it was issued. The nonce is
// checked after the proof's own checks, so a defective proof gets its own error.
func TestVerifyNonce(t *testing.T) {
	ns, _ := NewNonces(testRing(t, "k1"), time.Minute)
	v := newTestVerifier(t, Config{Nonces: ns})
	s := newSigner(t, "ES256")
	live, _ := ns.Issue(testNow.Add(-10 * time.Second))
	old, _ := ns.Issue(testNow.Add(-2 * time.Minute))
	for name, nonce := range map[string]any{"missing": nil, "expired": old, "forged": "definitely-not-the-server-nonce"} {
		_, err := v.Verify(s.proof(t, func(_, c map[string]any) { c["nonce"] = nonce }), request())
		if !errors.Is(err, ErrUseNonce) {
			t.Errorf("%s nonce: %v, want use_dpop_nonce", name, err)
		}
	}
	p, err := v.Verify(s.proof(t, func(_, c map[string]any) { c["nonce"] = live }), request())
	if err != nil || !p.NonceIssued.Equal(testNow.Add(-10*time.Second)) {
		t.Fatalf("live nonce: %v %+v", err, p)
	}
	_, err = v.Verify(s.proof(t, func(_, c map[string]any) { c["htm"] = "GET" }), request())
	if !errors.Is(err, ErrInvalidProof) {
		t.Errorf("a wrong htm without nonce: %v, want invalid_dpop_proof", err)
	}
}
