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
