package guardrails

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDetectorCorpus runs every case of testdata/detectors.txt: each line's detector alone over
// its text must find something (hit, or fp: a known false positive) or nothing (miss). Every content detector has a hit and a
// miss.
func TestDetectorCorpus(t *testing.T) {
	f, err := os.Open("testdata/detectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tb := newTables()
	seen := map[Detector][2]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, "\t", 3)
		if len(fields) != 3 {
			t.Fatalf("line %d: want detector, hit or miss, text", n)
		}
		det, ok := detectorByName(fields[0])
		text, err := strconv.Unquote(fields[2])
		if !ok || err != nil || (fields[1] != "hit" && fields[1] != "miss" && fields[1] != "fp") {
			t.Fatalf("line %d: %q %v", n, line, err)
		}
		got := 0
		for _, m := range scanString(tb, text, setOf(det)) {
			if m.det == det {
				got++
			}
		}
		hit := fields[1] != "miss"
		if hit != (got > 0) {
			t.Errorf("line %d: %s %s: %d matches in %q", n, fields[0], fields[1], got, text)
		}
		c := seen[det]
		switch fields[1] {
		case "hit":
			c[0]++
		case "miss":
			c[1]++
		}
		seen[det] = c
	}
	for d := range numDetectors {
		if d.Guardrail() != Schema && (seen[d][0] == 0 || seen[d][1] == 0) {
			t.Errorf("%s has %d hits and %d misses in the corpus; want one of each at least", d, seen[d][0], seen[d][1])
		}
	}
}
