package gateway

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocPathsExist: every file or directory of this repository that the README, SECURITY.md or
// docs/ name in code spans (`mcphttp/sink.go`, `helm/mcp-gateway/files/`) exists, so a reader
// sent to one finds it; a file renamed or split fails here until the prose follows. A path
// followed by a Go identifier (`internal/logging.NewLogger`) names the package's directory.
func TestDocPathsExist(t *testing.T) {
	// Paths the docs name in other repositories, each with the page that does.
	elsewhere := map[string]string{
		"docs/specification/2025-03-26": "legacy-2025-03-26.md", // the MCP specification's repository
		"docs/discovery.md":             "server-card.md",       // the server card extension's repository
	}
	mds, err := filepath.Glob(filepath.Join(configDocsRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	repoPath := regexp.MustCompile("`((?:\\.ci|cmd|internal|mcphttp|authz|mrtr|upstreams|metrics|helm|docs)/[A-Za-z0-9_./-]*)`")
	goIdent := regexp.MustCompile(`\.[A-Z][A-Za-z0-9]*$`)
	checked := 0
	for _, md := range append([]string{filepath.Join(configDocsRoot, "README.md"), filepath.Join(configDocsRoot, "SECURITY.md")}, mds...) {
		raw, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range repoPath.FindAllStringSubmatch(string(raw), -1) {
			p := goIdent.ReplaceAllString(strings.TrimRight(m[1], "/."), "")
			if elsewhere[p] == filepath.Base(md) {
				continue
			}
			checked++
			if _, err := os.Stat(filepath.Join(configDocsRoot, p)); err != nil {
				t.Errorf("%s names %s, which is not in the repository", filepath.Base(md), m[1])
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d paths found: the extraction lost some", checked)
	}
}

// TestReadmeNamesCIScripts: the README's repository table names every script of .ci/ (the
// executable files), so a newcomer looking for how CI, the fuzzing or the benchmarks run finds
// the script there.
func TestReadmeNamesCIScripts(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(configDocsRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `\\.ci/` \\|.*$").FindString(string(raw))
	if row == "" {
		t.Fatal("the README's repository table has no .ci/ row")
	}
	entries, err := os.ReadDir(filepath.Join(configDocsRoot, ".ci"))
	if err != nil {
		t.Fatal(err)
	}
	scripts := 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() || info.Mode().Perm()&0o100 == 0 {
			continue
		}
		scripts++
		if !strings.Contains(row, "`"+e.Name()+"`") {
			t.Errorf("the README's .ci/ row does not name .ci/%s: %s", e.Name(), row)
		}
	}
	if scripts < 5 {
		t.Errorf("only %d scripts in .ci/", scripts)
	}
}
