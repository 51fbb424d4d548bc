package helm

import (
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/mcp-gateway/gateway/internal/testsupport/nodecache"
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

// TestConformanceCompareNeedsItsReference: .ci/conformance-compare.mjs, the gate of `make
// conformance-legacy` (every required scenario that passes on the reference server alone passes
// through the gateway), fails when the reference run has no result for a scenario, whatever the
// gateway's: a reference run that did not happen (the suite did not start, wrote its results
// elsewhere, or ran part of the set) would otherwise pass the gate with nothing compared.
func TestConformanceCompareNeedsItsReference(t *testing.T) {
	node, dir := nodecache.Require(t, "the conformance comparison", "conformance",
		"node_modules/@modelcontextprotocol/conformance/package.json")
	suite := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance")
	const revision = "2025-11-25"
	var reqs struct {
		Server []string `json:"server"`
	}
	if err := sigsyaml.Unmarshal(readFile(t, helmCLI{root: suite}, filepath.Join("requirements", revision+".yaml")), &reqs); err != nil || len(reqs.Server) < 3 {
		t.Fatalf("the suite's %s requirements: %v (%d server scenarios)", revision, err, len(reqs.Server))
	}
	// Node reads the script in a child process, which go test's result cache does not see.
	trackInputs(t, repoRoot(t), func(name string) bool { return name == "conformance-compare.mjs" }, ".ci")
	all := reqs.Server
	first := all[:1]
	rest := all[1:]
	cases := []struct {
		name            string
		direct, gateway map[string]string // scenario -> "pass" or "fail"; absent: no result
		wantPass        bool
	}{
		{"both pass", verdictsOf(all, "pass"), verdictsOf(all, "pass"), true},
		{"the same failures", merge(verdictsOf(first, "fail"), verdictsOf(rest, "pass")), merge(verdictsOf(first, "fail"), verdictsOf(rest, "pass")), true},
		{"lost through the gateway", verdictsOf(all, "pass"), merge(verdictsOf(first, "fail"), verdictsOf(rest, "pass")), false},
		{"missing through the gateway", verdictsOf(all, "pass"), verdictsOf(rest, "pass"), false},
		{"no reference run", nil, nil, false},
		{"no reference run, the gateway's complete", nil, verdictsOf(all, "pass"), false},
		{"a scenario missing from the reference", verdictsOf(rest, "pass"), verdictsOf(all, "pass"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			direct, gateway := writeResults(t, tc.direct), writeResults(t, tc.gateway)
			cmd := exec.CommandContext(t.Context(), node, filepath.Join(repoRoot(t), ".ci", "conformance-compare.mjs"),
				suite, revision, direct, gateway)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("node: %v\n%s", err, out)
			}
			if (err == nil) != tc.wantPass {
				t.Errorf("passed = %v, want %v:\n%s", err == nil, tc.wantPass, out)
			}
		})
	}
}

// verdictsOf gives each scenario the verdict v.
func verdictsOf(scenarios []string, v string) map[string]string {
	m := map[string]string{}
	for _, s := range scenarios {
		m[s] = v
	}
	return m
}

func merge(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	maps.Copy(m, b)
	return m
}

// writeResults writes a results directory as the suite does: server-<scenario>-<timestamp>/
// checks.json, with a FAILURE check for a failing scenario.
func writeResults(t *testing.T, verdicts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for s, v := range verdicts {
		status := map[string]string{"pass": "SUCCESS", "fail": "FAILURE"}[v]
		d := filepath.Join(dir, "server-"+strings.ReplaceAll(s, "/", "-")+"-2026-12-07T10-00-00-000Z")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		checks := `[{"id":"x","status":"` + status + `"}]`
		if err := os.WriteFile(filepath.Join(d, "checks.json"), []byte(checks), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestConformanceSummaryNeedsScenarios: .ci/conformance-summary.mjs, the gate of `make
// conformance`, fails on a revision with no required server scenario and nothing extra to gate
// on, rather than passing with nothing checked (and passes a complete run).
func TestConformanceSummaryNeedsScenarios(t *testing.T) {
	node, dir := nodecache.Require(t, "the conformance summary", "conformance",
		"node_modules/@modelcontextprotocol/conformance/package.json")
	installed := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance")
	// Node reads the script in a child process, which go test's result cache does not see.
	trackInputs(t, repoRoot(t), func(name string) bool { return name == "conformance-summary.mjs" }, ".ci")
	// A copy of the suite's package whose requirements list no server scenario.
	suite := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(suite, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(suite, "package.json"), readFile(t, helmCLI{root: installed}, "package.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(suite, "requirements"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(suite, "requirements", "none.yaml"), []byte("client: [x]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), node, filepath.Join(repoRoot(t), ".ci", "conformance-summary.mjs"),
		suite, "none", writeResults(t, nil)).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Errorf("a revision with no server scenario: %v, want a failure:\n%s", err, out)
	}
	const revision = "2026-07-28"
	var reqs struct {
		Server []string `json:"server"`
	}
	if err := sigsyaml.Unmarshal(readFile(t, helmCLI{root: installed}, filepath.Join("requirements", revision+".yaml")), &reqs); err != nil {
		t.Fatal(err)
	}
	out, err = exec.CommandContext(t.Context(), node, filepath.Join(repoRoot(t), ".ci", "conformance-summary.mjs"),
		installed, revision, writeResults(t, verdictsOf(reqs.Server, "pass"))).CombinedOutput()
	if err != nil {
		t.Errorf("a complete passing run: %v, want a pass:\n%s", err, out)
	}
}

// TestFuzzScriptNeedsTargets: .ci/fuzz, the fuzzing stage of `make test`, fails when it finds
// no fuzz target instead of passing with nothing fuzzed (the repository has dozens: none found
// means the search broke).
func TestFuzzScriptNeedsTargets(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(repo, ".ci", "fuzz")
	if err := os.WriteFile(script, readFile(t, helmCLI{root: repoRoot(t)}, ".ci/fuzz"), 0o700); err != nil {
		t.Fatal(err)
	}
	src := "package p\n\nimport \"testing\"\n\nfunc TestP(t *testing.T) {}\n"
	if err := os.WriteFile(filepath.Join(repo, "p_test.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), script).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), "no fuzz targets") {
		t.Errorf(".ci/fuzz with no fuzz target: %v, want a failure saying so:\n%s", err, out)
	}
}

// TestMakeTargetsArePhony: every target of the Makefile is a command, none a file, so each is
// declared .PHONY: an undeclared one is skipped, "up to date", by make whenever a file or
// directory of its name exists (a lint-gofmt left by a tool, a bin/ or build/ directory).
func TestMakeTargetsArePhony(t *testing.T) {
	mk := string(readFile(t, helmCLI{root: repoRoot(t)}, "Makefile"))
	var phony []string
	for _, m := range regexp.MustCompile(`(?m)^\.PHONY:(.*)$`).FindAllStringSubmatch(mk, -1) {
		phony = append(phony, strings.Fields(m[1])...)
	}
	targets := regexp.MustCompile(`(?m)^([A-Za-z][A-Za-z0-9_-]*):([^=]|$)`).FindAllStringSubmatch(mk, -1)
	if len(targets) < 5 {
		t.Fatalf("found %d targets in the Makefile; the pattern no longer reads it", len(targets))
	}
	for _, m := range targets {
		if !slices.Contains(phony, m[1]) {
			t.Errorf("Makefile target %s is not declared .PHONY", m[1])
		}
	}
}
