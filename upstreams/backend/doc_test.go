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
		if d := documentedSeconds(t, doc, pattern); d != nil && d[0] != eraFanOutWait {
			t.Errorf("%s says %v; the code waits %v", doc, d[0], eraFanOutWait)
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
		if d := documentedSeconds(t, doc, pattern); d != nil && (d[0] != probeBackoffBase || d[1] != probeBackoffMax) {
			t.Errorf("%s says %v doubling to %v; the code backs off from %v to %v", doc, d[0], d[1], probeBackoffBase, probeBackoffMax)
		}
	}
}

// documentedSeconds reads, in the repository's document doc, the whole seconds pattern's groups
// capture, in order; nil (after reporting it) when the document no longer says it.
func documentedSeconds(t *testing.T, doc, pattern string) []time.Duration {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", doc))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(pattern).FindStringSubmatch(string(raw))
	if m == nil {
		t.Errorf("%s no longer says %q: reword this check with the document", doc, pattern)
		return nil
	}
	var out []time.Duration
	for _, g := range m[1:] {
		n, _ := strconv.Atoi(g)
		out = append(out, time.Duration(n)*time.Second)
	}
	return out
}

// TestInstructionsBoundAsDocumented: the README states the size past which a backend's
// instructions are left out; the statement is the code's MaxInstructionsBytes
// (TestBackendInstructionsBounded, in internal/gateway, drives the behaviour).
func TestInstructionsBoundAsDocumented(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`A backend's instructions longer\s+than ([0-9]+) KiB are left out`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("README.md no longer states the bound of a backend's instructions: reword this check with it")
	}
	if n, _ := strconv.Atoi(m[1]); n<<10 != MaxInstructionsBytes {
		t.Errorf("README.md says %s KiB; the code leaves out instructions past %d bytes", m[1], MaxInstructionsBytes)
	}
}
