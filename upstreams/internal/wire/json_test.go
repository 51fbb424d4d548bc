package wire

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// refSkipString is the byte-at-a-time skipString must agree with.
func refSkipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// TestSkipString: skipString ends a string where the byte-at-a-time walk does, whatever runs of
// backslashes come before its quotes, and finds the end of values that hold long strings.
func TestSkipString(t *testing.T) {
	pieces := []string{`a`, `\\`, `\"`, `\n`, `\u00e9`, `é`, `"`, strings.Repeat("x", 40)}
	rng := rand.New(rand.NewPCG(21, 2))
	for range 100000 {
		b := []byte{'"'}
		for n := rng.IntN(12); n > 0; n-- {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		if got, want := skipString(b, 0), refSkipString(b, 0); got != want {
			t.Fatalf("skipString(%q) = %d, want %d", b, got, want)
		}
	}
	long := strings.Repeat("y", 1000)
	for _, v := range []string{`"` + long + `\\"`, `"` + long + `\"` + long + `"`, `{"t":"` + long + `\\\"\\","n":[1,"]"]}`, `["\\\\\\","` + long + `"]`} {
		b := []byte(v + `,"after"`)
		if got := skipValue(b, 0); got != len(v) {
			t.Errorf("skipValue(%.40q…) = %d, want %d", v, got, len(v))
		}
	}
}
