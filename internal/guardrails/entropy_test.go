package guardrails

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// The entropy check's exceptions (published content hashes, names made of words) must not let
// random tokens through: of the random base64 tokens of 15 to 48 bytes that are random enough to
// report (randomRun), the detector still reports all but a few in ten thousand, the shortest
// (measured: about 7 in 10,000 at 20 characters, 1 at 27, none from 32 bytes up).
func TestEntropyKeepsRandomTokens(t *testing.T) {
	tb := newTables()
	r := rand.New(rand.NewPCG(32, 2026))
	const perSize = 4000
	random, missed, missedLong := 0, 0, 0
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
		for _, n := range []int{15, 16, 20, 24, 30, 32, 48} {
			b := make([]byte, n)
			for range perSize {
				for k := range b {
					b[k] = byte(r.Uint32())
				}
				s := enc.EncodeToString(b)
				if !tb.randomRun([]byte(strings.TrimRight(s, "="))) {
					continue
				}
				random++
				if len(scanString(tb, "token "+s, setOf(DetHighEntropy))) == 0 {
					missed++
					if n >= 32 {
						missedLong++
					}
				}
			}
		}
	}
	t.Logf("%d random tokens random enough to report, %d missed", random, missed)
	if missed*1000 > random || missedLong > 0 {
		t.Errorf("the entropy check misses %d of %d random tokens (%d of 32 bytes or more); at most 1 in 1,000, none of 32 bytes", missed, random, missedLong)
	}
}
