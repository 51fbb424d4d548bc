package gateway

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocReferences: the code explains itself with documents this repository holds. Every
// "docs/protocol.md §N" a comment cites names a section that page has, and no comment points at
// a document outside the repository (the design notes and the protocol digest the project began
// from), which a maintainer of this repository does not have.
func TestDocReferences(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{2,3} §([0-9.]+) `).FindAllStringSubmatch(string(page), -1) {
		sections[m[1]] = true
	}
	cite := regexp.MustCompile(`docs/protocol\.md §([0-9]+(?:\.[0-9]+)?)`)
	outside := regexp.MustCompile(`digest §|\bSTYLE\.md\b|\bDESIGN\.md\b|LEGACY-EDGE\.md|PEERS\.md`)
	// Every line either pattern matches holds one of these strings: a file with none of them is
	// passed over whole instead of matching both patterns against each of its lines, which under
	// the race detector took longer than any other test of the package.
	needles := [][]byte{[]byte("docs/protocol.md"), []byte("digest §"), []byte("STYLE.md"), []byte("DESIGN.md"),
		[]byte("LEGACY-EDGE.md"), []byte("PEERS.md")}
	cited := 0
	walkGoFiles(t, root, func(path string, src []byte) {
		if !slices.ContainsFunc(needles, func(n []byte) bool { return bytes.Contains(src, n) }) {
			return
		}
		for i, line := range strings.Split(string(src), "\n") {
			if outside.MatchString(line) && path != filepath.Join(root, "internal", "gateway", "docrefs_test.go") {
				t.Errorf("%s:%d cites a document outside the repository: %s", path, i+1, strings.TrimSpace(line))
			}
			for _, m := range cite.FindAllStringSubmatch(line, -1) {
				cited++
				if !sections[m[1]] {
					t.Errorf("%s:%d cites docs/protocol.md §%s, which has no such section", path, i+1, m[1])
				}
			}
		}
	})
	if cited == 0 {
		t.Error("no comment cites docs/protocol.md: the walk found no source")
	}
}
