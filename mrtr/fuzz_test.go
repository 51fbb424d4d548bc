package mrtr

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// fuzzTokens were sealed by newFixture's codec (key "k1", its fixed clock)
// for testBinding; they are the only tokens that may open.
var fuzzTokens = map[string]Kind{
	"v1.k1.Km8iemlHTU32K1OeRjWQwLKIYpKplVPHahfirKWoxMpDSMYaBmt05bgDfIg-sloM4GYwW_TYdlgiS3LmMhofXhOasqslhZ5CtuLrTU55F2a1W0I-K4-cUgqVtV8tVXB3gdbMrwNFCmWGTfTqmlAoNoCOOeiGZqw0PcM9uIRWUYjPKc6bJ-mcEw6-KxeVNt1rLkSXWbyL_vL5Gp78":           KindConfirm,
	"v1.k1.HPPxKoSQgRJ1Uw0bluuhoBKmxEEr_YjZsr0Hp_KD-NC2rdFZLnJNPf01z_EBcOrMwzBJGZ-i9jWrjpKWlL7s--vlqHnpLduYDJP44-jx5LS2hKZRxPeuhhzAKtCCinSqxJMcDNkzAiNZ07SNN1HhmPTxsqUsASGW9x-sIpIL8U47K_rZTu7GMVD9cXj6NfQonzOafUwB4g2ZaSorkoEYKuv0bQ": KindUpstream,
}

// FuzzCodecOpen checks that Open never panics, that every rejection is an
// ErrInvalidState with a reason from the closed set, and that nothing but a
// token the codec sealed opens. Seeds live in testdata/fuzz/FuzzCodecOpen.
func FuzzCodecOpen(f *testing.F) {
	for tok := range fuzzTokens {
		f.Add(tok)
	}
	fx := newFixture(f)
	b := testBinding(f)
	reasons := Reasons()
	f.Fuzz(func(t *testing.T, token string) {
		st, err := fx.codec.Open(token, b)
		if err != nil {
			if st != nil || !errors.Is(err, ErrInvalidState) || !slices.Contains(reasons, Reason(err)) {
				t.Fatalf("Open(%q) = %v, %v (reason %q)", token, st, err, Reason(err))
			}
			return
		}
		kind, ok := fuzzTokens[token]
		if !ok {
			t.Fatalf("forged token opened: %q -> %+v", token, st)
		}
		if st.Kind != kind {
			t.Fatalf("token %q opened as %v, want %v", token, st.Kind, kind)
		}
	})
}

func TestFuzzTokensOpen(t *testing.T) {
	fx := newFixture(t)
	for tok := range fuzzTokens {
		if _, err := fx.codec.Open(tok, testBinding(t)); err != nil {
			t.Fatalf("seed %q: %v", tok, err)
		}
	}
}

// FuzzDigest checks that canonicalization never panics, that its output is
// a fixed point, and that it agrees with the encoding/json-based reference:
// the same canonical form whenever the reference accepts, except that lone
// surrogate escapes (which the reference silently replaces) are refused.
func FuzzDigest(f *testing.F) {
	for _, s := range []string{
		`{"b":[1,{"d":"\u0001"}],"a":"é"}`, `null`, `[]`, `{"a":1,"a":2}`, `"\ud800"`, ``,
		`"\ud83d\ude00"`, `-0.5e+10`, `{"a":[true,false,null,{}]}`, `01`, `"\/\b\f\n\r\t"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := canonical(in)
		ref, refErr := referenceCanonical(in)
		if err != nil {
			if !errors.Is(err, ErrInvalidArguments) {
				t.Fatalf("undocumented error %v", err)
			}
			if refErr == nil && !strings.Contains(err.Error(), "surrogate") {
				t.Fatalf("canonical(%q) refused (%v) what the reference accepts", in, err)
			}
			return
		}
		if refErr != nil || !bytes.Equal(c, ref) {
			t.Fatalf("canonical(%q) = %q, reference = %q (%v)", in, c, ref, refErr)
		}
		again, err := canonical(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("canonical form not stable: %q -> %q (%v)", c, again, err)
		}
	})
}

// FuzzRetryParams checks that rewriting params never panics and always
// yields valid JSON without a top-level requestState for confirmations.
func FuzzRetryParams(f *testing.F) {
	for _, s := range []string{
		`{"name":"t","requestState":"x","inputResponses":{}}`, `{ "requestState" : "x" }`, `{}`, `[]`,
		`{"a":{"requestState":1},"requestState":"y"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := RetryParams(in, &State{Kind: KindConfirm})
		if err != nil {
			return
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(out, &top); err != nil {
			t.Fatalf("RetryParams(%q) = %q, not an object: %v", in, out, err)
		}
		if _, ok := top[fieldRequestState]; ok {
			t.Fatalf("RetryParams(%q) = %q still has requestState", in, out)
		}
		if _, ok := top[fieldInputResponses]; ok {
			t.Fatalf("RetryParams(%q) = %q still has inputResponses", in, out)
		}
	})
}
