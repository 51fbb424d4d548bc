package seal

import (
	"errors"
	"testing"
)

// fuzzValidTokens were sealed once under fuzzRing's newest key for
// PurposeRequestState; they are the only inputs that may open.
var fuzzValidTokens = map[string]string{
	"v1.fuzz.mhiO_Vi709yNXtYe38Gd5IPjEQD_IqqRkIlXZKGIjPRHfit1gu-BxQ":                         "",
	"v1.fuzz.HmlyK5gaU4VZTCyBvZ1sWWaZo2AJfAwjUA91jrwIDtWVVWg3GeI6Hc8EHdxO":                   "hello",
	"v1.fuzz.STXy68f0PZkINoQoVNzmdx9tv2dfe3BPdVU0ZXXfySAJttbFMVvsgh4sbwIFDIaAezeoaTYivr6smg": `{"kind":"confirm"}`,
}

func fuzzRing(t testing.TB) *KeyRing {
	return mustRing(t, Config{Keys: []Key{testKey("fuzz-old", 0xA1), testKey("fuzz", 0xA2)}})
}

// FuzzOpen checks that Open never panics, reports only the documented
// sentinels, and never opens anything but a token it sealed. The seed corpus
// lives in testdata/fuzz/FuzzOpen.
func FuzzOpen(f *testing.F) {
	for tok := range fuzzValidTokens {
		f.Add(tok)
	}
	s := fuzzRing(f).Sealer(PurposeRequestState)
	f.Fuzz(func(t *testing.T, token string) {
		pt, err := s.Open(token)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrOversized) &&
				!errors.Is(err, ErrUnknownKey) && !errors.Is(err, ErrTampered) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		want, ok := fuzzValidTokens[token]
		if !ok {
			t.Fatalf("forged token opened: %q -> %q", token, pt)
		}
		if string(pt) != want {
			t.Fatalf("token %q opened to %q, want %q", token, pt, want)
		}
	})
}

func TestFuzzSeedsOpen(t *testing.T) {
	s := fuzzRing(t).Sealer(PurposeRequestState)
	for tok, want := range fuzzValidTokens {
		pt, err := s.Open(tok)
		if err != nil || string(pt) != want {
			t.Fatalf("seed %q: got %q, %v", tok, pt, err)
		}
	}
}
