package jsonrpc

import (
	"encoding/json"
	"testing"
)

// TestNotificationMethodRoundTrip: the method AppendNotification writes decodes to the method
// it was given, for every byte value in it and for the characters encoding/json escapes
// (invalid UTF-8 decodes as encoding/json's own rendering does, to U+FFFD).
func TestNotificationMethodRoundTrip(t *testing.T) {
	cases := []string{"", "notifications/progress", "a<b", "x&y", "q\"", "b\\", "é", "\u2028", "bad\xff", "tab\t"}
	for c := range 256 {
		cases = append(cases, "notifications/"+string([]byte{byte(c)})+"x")
	}
	for _, s := range cases {
		var got, want struct{ Method string }
		if err := json.Unmarshal(AppendNotification(nil, s, nil), &got); err != nil {
			t.Fatalf("AppendNotification(%q): %v", s, err)
		}
		m, _ := json.Marshal(s)
		if err := json.Unmarshal([]byte(`{"method":`+string(m)+`}`), &want); err != nil {
			t.Fatal(err)
		}
		if got.Method != want.Method {
			t.Fatalf("method %q read back as %q, want %q", s, got.Method, want.Method)
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
