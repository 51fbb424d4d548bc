package backend

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestEraWaitAsDocumented: the README and SECURITY.md state how long a list waits for the era
// probe of a backend whose era is unknown before leaving it out; the statement is the code's
// eraFanOutWait (TestListLeavesOutHungBackend drives the behaviour, without timing it).
func TestEraWaitAsDocumented(t *testing.T) {
	for doc, pattern := range map[string]string{
		"README.md":   `wait at most ([0-9]+) s for the probe`,
		"SECURITY.md": `lists wait at most ([0-9]+) s for it`,
	} {
		raw, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(pattern).FindStringSubmatch(string(raw))
		if m == nil {
			t.Errorf("%s no longer says %q: reword this check with the document", doc, pattern)
			continue
		}
		if s, _ := strconv.Atoi(m[1]); time.Duration(s)*time.Second != eraFanOutWait {
			t.Errorf("%s says %s s; the code waits %v", doc, m[1], eraFanOutWait)
		}
	}
}

// TestProbeBackoffAsDocumented: the README and SECURITY.md state the backoff after a failed era
// probe, its first wait and its ceiling; the statement is the code's probeBackoffBase and
// probeBackoffMax (TestProbeBackoffGrowsWithJitter drives the growth, with a fixed clock).
func TestProbeBackoffAsDocumented(t *testing.T) {
	for doc, pattern := range map[string]string{
		"README.md":   `backoff of ([0-9]+) s doubling to ([0-9]+) s`,
		"SECURITY.md": `one probe per backoff \(([0-9]+) s doubling to ([0-9]+) s`,
	} {
		raw, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(pattern).FindStringSubmatch(string(raw))
		if m == nil {
			t.Errorf("%s no longer says %q: reword this check with the document", doc, pattern)
			continue
		}
		base, _ := strconv.Atoi(m[1])
		ceiling, _ := strconv.Atoi(m[2])
		if time.Duration(base)*time.Second != probeBackoffBase || time.Duration(ceiling)*time.Second != probeBackoffMax {
			t.Errorf("%s says %s s doubling to %s s; the code backs off from %v to %v", doc, m[1], m[2], probeBackoffBase, probeBackoffMax)
		}
	}
}
