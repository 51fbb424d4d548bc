package jsonrpc

import "testing"

// TestLoneSurrogate: a \u escape of a surrogate that is not half of a pair is found wherever it
// stands; a pair, an escaped backslash before a "u", and other escapes are not.
func TestLoneSurrogate(t *testing.T) {
	for lit, want := range map[string]bool{
		`"\ud800"`:              true,
		`"a\udc00b"`:            true,
		`"\ud800\u0041"`:        true,
		`"\ud83d\ude00"`:        false,
		`"\\ud800"`:             false,
		`"\n\u00e9\t"`:          false,
		`"x\ud83d\ude00\ud800"`: true,
		`"plain"`:               false,
	} {
		if got := LoneSurrogate([]byte(lit)); got != want {
			t.Errorf("LoneSurrogate(%s) = %v, want %v", lit, got, want)
		}
	}
	if r, n := EscapedRune([]byte(`\ud83d\ude00`), 0); r != 0x1F600 || n != 12 {
		t.Errorf("a pair: %U, %d", r, n)
	}
}
