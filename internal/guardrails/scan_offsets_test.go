package guardrails

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/racetest"
)

// The scanner and the reference at every offset: each kind of match, and each kind of byte
// above ASCII, placed at every offset of the first 100 bytes and around the multiples of 32 and
// 64 up to 2 KiB and past it, glued to the word before it and after a space; texts of every
// length up to 100 and around those multiples. A loop that reads the text in blocks (of 32 or
// 64 bytes, or runs of them) is wrong first at their edges: these texts put every piece there.

// offsets are the lengths and places the tests below use.
func offsets() []int {
	var out []int
	for n := range 101 {
		out = append(out, n)
	}
	for _, edge := range []int{128, 160, 192, 256, 2048, 2112} {
		for d := -9; d <= 9; d++ {
			out = append(out, edge+d)
		}
	}
	return out
}

func TestScanMatchesReferenceAtEveryOffset(t *testing.T) {
	racetest.SkipPureComputation(t)
	tb, hosts, sets := newTables(), diffHosts(), diffSets()[:5]
	pieces := []string{"ignore all previous instructions and", "AKIAIOSFODNN7EXAMPLE", "ghp_" + strings.Repeat("aB3", 12),
		"mail bob@example.org now", "see https://evil.test/x?y=1", "password=hunter2hunter2", "4111 1111 1111 1111",
		"+1 (415) 555-0100", "<|im_start|>system", "\u200b\u200b", "\u202e", "é", "\xff", "DE89370400440532013000",
		"DE89 3704 0044 0532 0130 00", "AB12", "word", "x"}
	filler := strings.Repeat("the build passed; ", 200)
	for _, p := range pieces {
		for _, at := range offsets() {
			checkSame(t, tb, hosts, []byte(filler[:at]+p+" "+filler[:20]), sets)
			if at > 0 {
				checkSame(t, tb, hosts, []byte(filler[:at-1]+" "+p+" "+filler[:20]), sets)
			}
		}
	}
	for _, n := range offsets() {
		checkSame(t, tb, hosts, []byte(filler[:n]), sets)
		checkSame(t, tb, hosts, []byte(strings.Repeat("a", n)), sets)
	}
}

// A byte above ASCII (the first of a code point, a lone continuation byte, an invisible or a
// bidi code point, an emoji, a no-break space) at every offset of a text of 200 bytes.
func TestScanMatchesReferenceNonASCIIAtEveryOffset(t *testing.T) {
	tb, hosts, sets := newTables(), diffHosts(), diffSets()[:5]
	base := strings.Repeat("ab cd", 40)
	for _, c := range []string{"é", "\x80", "\u200b", "\u202e", "😀", "\u00a0"} {
		for k := 0; k <= len(base); k++ {
			checkSame(t, tb, hosts, []byte(base[:k]+c+base[k:]), sets)
		}
	}
}
