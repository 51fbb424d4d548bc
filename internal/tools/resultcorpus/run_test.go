package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAnonymise checks that neither the export's nor the scratch directory survives in a line,
// plain or JSON-escaped inside a string that holds JSON.
func TestAnonymise(t *testing.T) {
	repo, tmp := `/tmp/qz"9/repo`, `/tmp/qz"9`
	inner, _ := json.Marshal(map[string]string{"path": repo + "/a.go", "home": tmp})
	line, _ := json.Marshal(map[string]string{"text": string(inner), "path": repo})
	got := string(anonymise(line, repo, tmp))
	if strings.Contains(got, "qz") {
		t.Fatalf("a path of the recording machine is left: %s", got)
	}
	if !strings.Contains(got, "/repo/a.go") || !strings.Contains(got, "/tmp/corpus") {
		t.Fatalf("paths not rewritten: %s", got)
	}
}

// TestSpread checks the even sample: n items, first included, in order, all when n is larger.
func TestSpread(t *testing.T) {
	xs := []string{"a", "b", "c", "d", "e", "f"}
	if got := strings.Join(spread(xs, 3), ""); got != "ace" {
		t.Fatalf("spread 3 of 6 = %q", got)
	}
	if got := spread(xs, 10); len(got) != 6 {
		t.Fatalf("spread 10 of 6 = %v", got)
	}
}
