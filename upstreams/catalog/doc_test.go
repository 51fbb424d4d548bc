package catalog

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestListedNamesAsDocumented: the README says how long a list fetched for a call is used to
// check the names calls use, and how soon a tool a backend adds is callable without its
// list_changed; both are the code's minHeaderIndexTTL (TestUnlistedNames, in the gateway's
// tests, drives the behaviour, without timing it).
func TestListedNamesAsDocumented(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{`list fetched in the last ([0-9]+) seconds`, `\(its .ttlMs., at least\s+([0-9]+) s\)`} {
		m := regexp.MustCompile(pattern).FindStringSubmatch(string(raw))
		if m == nil {
			t.Errorf("the README no longer says %q: reword this check with the document", pattern)
			continue
		}
		if s, _ := strconv.Atoi(m[1]); time.Duration(s)*time.Second != minHeaderIndexTTL {
			t.Errorf("the README says %s s; the code uses a list for %v", m[1], minHeaderIndexTTL)
		}
	}
}
