package listen

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestQueueBoundsAsDocumented: SECURITY.md, the README and docs/observability.md state a
// listener's queue bound as "1,024 notifications or 256 KiB"; each statement is the code's
// defaultQueueLimits, which TestStalledListenerIsBounded drives.
func TestQueueBoundsAsDocumented(t *testing.T) {
	stated := regexp.MustCompile(`([0-9,]+) notifications or\s+([0-9]+) KiB`)
	for _, doc := range []string{"SECURITY.md", "README.md", "docs/observability.md"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		all := stated.FindAllStringSubmatch(string(raw), -1)
		if len(all) == 0 {
			t.Errorf("%s no longer states the listen queue's bound in the form this test reads", doc)
		}
		for _, m := range all {
			n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
			kib, _ := strconv.Atoi(m[2])
			if n != defaultQueueLimits.events || kib<<10 != defaultQueueLimits.bytes {
				t.Errorf("%s states %q; the code bounds a queue at %d notifications or %d bytes",
					doc, m[0], defaultQueueLimits.events, defaultQueueLimits.bytes)
			}
		}
	}
}
