package jsonrpc

import (
	"encoding/json"
	"testing"
)

// TestCanonicalID: notifications/cancelled, a batch's duplicate check and a backend's answer
// name a request by its id as a peer decodes it: escapes decoded, and a number as the double a
// JavaScript peer reads (0 and -0 one id; integers beyond 2^53 that round alike one id), while
// a string and a number of the same digits stay two ids.
func TestCanonicalID(t *testing.T) {
	same := [][2]string{{`"b1"`, `"\u0062\u0031"`}, {`0`, `-0`}, {`9007199254740992`, `9007199254740993`},
		{`123456789012345678901234567`, `123456789012345678901234568`},
		{`"\ud800"`, `"\uD800"`}, {`"a\ud800\n\/"`, `"\u0061\ud800\u000a/"`}, {`"\ud83d\ude00\udc00"`, `"😀\udc00"`}}
	differ := [][2]string{{`7`, `"7"`}, {`5`, `-5`}, {`9007199254740992`, `9007199254740994`}, {`1`, `10`},
		{`"\ud800"`, `"\ufffd"`}, {`"\ud800"`, `"\udc00"`}, {`"\ud800"`, `"\ud800\ud800"`}, {`"\ud800\n"`, `"\ud800n"`}}
	key := func(id string) string {
		k, ok := CanonicalID(json.RawMessage(id))
		if !ok {
			t.Fatalf("%s: not an id", id)
		}
		return k
	}
	for _, p := range same {
		if key(p[0]) != key(p[1]) {
			t.Errorf("%s and %s: two ids, want one", p[0], p[1])
		}
	}
	for _, p := range differ {
		if key(p[0]) == key(p[1]) {
			t.Errorf("%s and %s: one id, want two", p[0], p[1])
		}
	}
	for _, id := range []string{`1.5`, `1e3`, `null`, `true`, `{}`, `-`, `"\ud800"x`} {
		if k, ok := CanonicalID(json.RawMessage(id)); ok {
			t.Errorf("%s: id %q, want none", id, k)
		}
	}
}

// TestAnswersAgreesWithCanonicalID: a backend's result answers a request exactly when the two
// ids are one id as the edge's cancellations and batches compare them, so a response the
// gateway takes as an answer is one a client would take as the same request's.
func TestAnswersAgreesWithCanonicalID(t *testing.T) {
	ids := []string{`1`, `1.0`, `1e0`, `-0`, `0`, `0.0`, `"1"`, `"\u0031"`, `9007199254740993`, `9007199254740992.0`}
	for _, sent := range ids {
		for _, got := range ids {
			m, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":`+got+`,"result":{}}`), Limits{})
			if err != nil {
				t.Fatalf("DecodeMessage(id %s): %v", got, err)
			}
			a, okA := CanonicalID(json.RawMessage(sent))
			b, okB := CanonicalID(json.RawMessage(got))
			want := sent == got || (okA && okB && a == b)
			if m.Answers(json.RawMessage(sent)) != want {
				t.Errorf("a result with id %s answers id %s: %v, want %v", got, sent, !want, want)
			}
		}
	}
}
