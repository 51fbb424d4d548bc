package helm

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeNamesWhatSetupInstalls: the README's account of `make test` names every Debian
// package .ci/setup installs when it is missing, and no other: what the one command the README
// promises does to a machine is said before it runs.
func TestReadmeNamesWhatSetupInstalls(t *testing.T) {
	root := repoRoot(t)
	setup := string(readFile(t, helmCLI{root: root}, ".ci/setup"))
	var installed []string
	for _, m := range regexp.MustCompile(`missing\+=\(([a-z0-9.+-]+)\)`).FindAllStringSubmatch(setup, -1) {
		installed = append(installed, m[1])
	}
	if len(installed) < 3 {
		t.Fatalf(".ci/setup adds %q to its missing packages; want the packages it installs", installed)
	}
	readme := string(readFile(t, helmCLI{root: root}, "README.md"))
	claim := regexp.MustCompile("(?s)`.ci/setup` \\(apt installs (.*?) when\\s+missing").FindStringSubmatch(readme)
	if claim == nil {
		t.Fatal("README.md does not say what `.ci/setup` installs (\"`.ci/setup` (apt installs ... when missing\")")
	}
	var named []string
	for _, m := range regexp.MustCompile("`([a-z0-9.+-]+)`").FindAllStringSubmatch(claim[1], -1) {
		// Setup installs nginx-light where the release has it, nginx otherwise.
		named = append(named, strings.TrimSuffix(m[1], "-light"))
	}
	slices.Sort(installed)
	slices.Sort(named)
	if !slices.Equal(slices.Compact(installed), slices.Compact(named)) {
		t.Errorf("README.md says .ci/setup installs %q; it installs %q", named, installed)
	}
}
