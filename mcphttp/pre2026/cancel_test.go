package pre2026

import (
	"encoding/json"
	"testing"
)

// TestCanonicalRequestID: notifications/cancelled and a batch's duplicate check name a request
// by its id as a client decodes it: escapes decoded, and a number as the double a JavaScript
// client reads (0 and -0 one id; integers beyond 2^53 that round alike one id), while a string
// and a number of the same digits stay two ids.
func TestCanonicalRequestID(t *testing.T) {
	same := [][2]string{{`"b1"`, `"\u0062\u0031"`}, {`0`, `-0`}, {`9007199254740992`, `9007199254740993`},
		{`123456789012345678901234567`, `123456789012345678901234568`}}
	differ := [][2]string{{`7`, `"7"`}, {`5`, `-5`}, {`9007199254740992`, `9007199254740994`}, {`1`, `10`}}
	key := func(id string) string {
		k, ok := canonicalRequestID(json.RawMessage(id))
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
		if k, ok := canonicalRequestID(json.RawMessage(id)); ok {
			t.Errorf("%s: id %q, want none", id, k)
		}
	}
}
