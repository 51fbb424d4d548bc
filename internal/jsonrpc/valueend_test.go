package jsonrpc

import (
	"encoding/json"
	"testing"
)

// ValueEnd ends each kind of value where a JSON decoder does, whatever its strings hold
// (quotes and brackets escaped or not) and whatever follows it.
func TestValueEnd(t *testing.T) {
	for _, c := range []struct{ text, value string }{
		{`"a\"}]" , 1`, `"a\"}]"`},
		{`"a\\"]`, `"a\\"`},
		{`{"k":"}","n":[1,{"x":"]"}],"e":{}},"z"`, `{"k":"}","n":[1,{"x":"]"}],"e":{}}`},
		{`[[],[[]],"[",{"]":"\\"}]]`, `[[],[[]],"[",{"]":"\\"}]`},
		{`-12.5e+3}`, `-12.5e+3`},
		{`true]`, `true`},
		{"null\n,", `null`},
		{`1234`, `1234`},
	} {
		b := []byte(c.text)
		got := string(b[:ValueEnd(b, 0)])
		if got != c.value {
			t.Errorf("%s: value %s, want %s", c.text, got, c.value)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: %s is not one JSON value", c.text, got)
		}
	}
	// Without an end, the end of the text.
	for _, s := range []string{`{"a":[1,2`, `"abc`, `[{"x":"]"}`} {
		if n := ValueEnd([]byte(s), 0); n != len(s) {
			t.Errorf("%s: end %d, want %d", s, n, len(s))
		}
	}
	// The value that starts at an offset other than 0.
	b := []byte(`{"a":{"b":[1]},"c":2}`)
	if got := string(b[5:ValueEnd(b, 5)]); got != `{"b":[1]}` {
		t.Errorf("at 5: %s", got)
	}
}
