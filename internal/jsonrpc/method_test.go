package jsonrpc

import (
	"encoding/json"
	"testing"
)

// TestAppendMarshaledString: the shortcut writes what json.Marshal writes, for every byte value
// in a method name and for names json.Marshal escapes.
func TestAppendMarshaledString(t *testing.T) {
	cases := []string{"", "notifications/progress", "a<b", "x&y", "q\"", "b\\", "é", "\u2028", "bad\xff", "tab\t"}
	for c := range 256 {
		cases = append(cases, "notifications/"+string([]byte{byte(c)})+"x")
	}
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := appendMarshaledString([]byte("p"), s); string(got) != "p"+string(want) {
			t.Fatalf("appendMarshaledString(%q) = %q, want %q", s, got[1:], want)
		}
	}
}

// TestDecodeMessageMethod: a method read without json.Unmarshal is the one json.Unmarshal reads,
// escaped or not.
func TestDecodeMessageMethod(t *testing.T) {
	for _, raw := range []string{`"notifications/progress"`, `"a\u002fb"`, `"tab\tx"`, `"é"`, `"<&>"`} {
		m, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","method":`+raw+`}`), Limits{})
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if m.Method != want {
			t.Fatalf("method %s read as %q, want %q", raw, m.Method, want)
		}
	}
}
