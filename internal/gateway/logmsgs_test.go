package gateway

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocumentedLogMessages: every msg of docs/observability.md's table of decision lines, and of
// the backend, start-up and shutdown lines named after it, which operators search and alert on,
// is a message the code writes (a Go string literal of the
// serving code), so a renamed line fails here rather than in someone's dashboard. Messages the
// table composes ("`confirmation ` + `declined`") are checked by their first part.
func TestDocumentedLogMessages(t *testing.T) {
	root := filepath.Join("..", "..")
	raw, err := os.ReadFile(filepath.Join(root, "docs", "observability.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(raw), "### Decision lines")
	table, _, _ = strings.Cut(table, "\nBackend problems")
	cell := regexp.MustCompile("(?m)^\\| (`[^|]+) \\| (?:INFO|WARN|ERROR) \\|")
	first := regexp.MustCompile("`([^`]+)`")
	var msgs []string
	for _, m := range cell.FindAllStringSubmatch(table, -1) {
		for _, alt := range strings.Split(m[1], ", ") {
			if q := first.FindStringSubmatch(alt); q != nil {
				msgs = append(msgs, q[1])
			}
		}
	}
	// The backend, start-up and shutdown lines the paragraph after the table names.
	_, after, _ := strings.Cut(string(raw), "\nBackend problems")
	after, _, _ = strings.Cut(after, "\n\n")
	for _, q := range regexp.MustCompile("`(upstream [^`]+|gateway started|draining|stopped)`").FindAllStringSubmatch(after, -1) {
		msgs = append(msgs, q[1])
	}
	if len(msgs) < 20 {
		t.Fatalf("read only %d messages from the table of decision lines: %q", len(msgs), msgs)
	}
	literals := map[string]bool{}
	lit := regexp.MustCompile(`"(?:[^"\\\n]|\\.)*"`)
	walkGoFiles(t, root, func(path string, src []byte) {
		if strings.HasSuffix(path, "_test.go") || strings.Contains(path, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
			return
		}
		for _, l := range lit.FindAllString(string(src), -1) {
			if s, err := strconv.Unquote(l); err == nil {
				literals[s] = true
			}
		}
	})
	for _, m := range msgs {
		if !literals[m] {
			t.Errorf("docs/observability.md documents the log line %q, which no serving code writes", m)
		}
	}
}

// walkGoFiles calls fn with every Go file of the repository below root and its text, leaving out
// hidden directories (the shared cache among them) and node_modules.
func walkGoFiles(t *testing.T, root string, fn func(path string, src []byte)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fn(path, src)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
