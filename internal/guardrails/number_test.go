package guardrails

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// A payment card sent as a JSON number is found as in a string, whatever the number's
// spelling, and a redaction replaces the number whole with the marker as a string.
func TestNumbersScannedAsDigits(t *testing.T) {
	e := testEngine(t, everything("redact"))
	r := e.Rule(KindTool, "b", "t")
	for _, lit := range []string{"4111111111111111", "-4111111111111111", "4111111111111111.0", "4.111111111111111e15",
		"4.111111111111111E+15", "41111111111111.11e2", "0.4111111111111111e16", "4111111111111111e0", "41111111111111110e-1",
		"5500000000000004", "340000000000009"} {
		for _, raw := range []string{`{"card":` + lit + `}`, `{"a":[1,` + lit + `,2]}`} {
			rep := r.ScanArguments([]byte(raw))
			if rep.Counts[DetPaymentCard] != 1 || rep.Action != Redact {
				t.Errorf("%s: %v, counts %d; want the card found", raw, rep.Action, rep.Counts[DetPaymentCard])
				continue
			}
			out := rep.Rewrite([]byte(raw))
			var v any
			if err := json.Unmarshal(out, &v); err != nil || !strings.Contains(string(out), `"[REDACTED:payment-card]"`) ||
				strings.Contains(string(out), "411111") {
				t.Errorf("%s redacted to %s (%v)", raw, out, err)
			}
		}
		if rep := r.ScanResult([]byte(`{"content":[],"structuredContent":{"card":` + lit + `}}`)); rep.Counts[DetPaymentCard] != 1 {
			t.Errorf("structuredContent %s: not found", lit)
		}
	}
	for _, lit := range []string{"4111111111111112", "4111111111111111e-5", "4111111111111111e30", "1e999999999", "-0",
		"12", "3.5", "0.000000000000000000000004111111111111111", "true", "null",
		"4155552671", "14155550132", "442079460958"} { // digits alone match only payment-card: a phone number needs its + or separators
		if rep := r.ScanArguments([]byte(`{"n":` + lit + `}`)); !rep.Clean() {
			t.Errorf("%s: %+v", lit, rep.Findings)
		}
	}
}

// The property behind it: a number holds a finding exactly when the digits of its integer
// part, as a string, do.
func TestNumbersAgreeWithTheirDigits(t *testing.T) {
	e := testEngine(t, everything("log"))
	r := e.Rule(KindTool, "b", "t")
	rng := rand.New(rand.NewPCG(1, 2))
	prefixes := []string{"4", "51", "34", "6011", "35", "1415", "1", ""}
	for range 3000 {
		n := prefixes[rng.IntN(len(prefixes))] + strconv.Itoa(1+rng.IntN(9)) // no leading zero: JSON has none
		for len(n) < 9+rng.IntN(12) {
			n += strconv.Itoa(rng.IntN(10))
		}
		str := r.ScanArguments([]byte(`{"v":"` + n + `"}`))
		num := r.ScanArguments([]byte(`{"v":` + n + `}`))
		if str.Counts != num.Counts {
			t.Fatalf("%s: as a string %v, as a number %v", n, str.Counts, num.Counts)
		}
	}
}
