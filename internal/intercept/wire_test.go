package intercept

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestReasonShown: the reason a refusal shows is the text of the interceptor's error messages
// (all of them when none is marked), joined, without control, invisible or bidi characters that
// could hide text from the reader, and at most maxReasonBytes on whole characters.
func TestReasonShown(t *testing.T) {
	for _, tc := range []struct{ messages, want string }{
		{`[{"message":"no PII","severity":"error"},{"message":"just a note","severity":"info"},{"message":"no keys"}]`, "no PII; no keys"},
		{`[{"message":"a\u0000b\nc\u202ed\u200be\u2066f","severity":"error"}]`, "abcdef"},
		{`"not an array"`, ""},
		{``, ""},
	} {
		a := &answer{}
		if tc.messages != "" {
			a.messages = []byte(tc.messages)
		}
		if got := a.reasons(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.messages, got, tc.want)
		}
	}
	// 512 bytes, as docs/interceptors.md's limits table says.
	long := &answer{messages: []byte(`[{"message":"` + strings.Repeat("é", 512) + `"}]`)}
	got := long.reasons()
	if len(got) > 512+len("…") || len(got) < 512-1 || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Fatalf("a long reason is %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}
