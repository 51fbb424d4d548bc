package helm

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	// helmModule and helmVersion pin the helm CLI the chart is tested with.
	helmModule  = "helm.sh/helm/v3"
	helmVersion = "v3.22.0"
	// chartDir is the chart, relative to the repository root.
	chartDir = "helm/mcp-gateway"
	// releaseName and namespace of every rendering.
	releaseName = "rel"
	namespace   = "mcp"
	// helmTimeout bounds one helm invocation; building helm is bounded separately.
	helmTimeout = 60 * time.Second
	// buildTimeout bounds go install of helm and the static gateway build.
	buildTimeout = 10 * time.Minute
)

// helmCLI runs the pinned helm binary from the repository root.
type helmCLI struct {
	bin  string
	root string
}

// repoRoot walks up from the test's directory to the directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		dir = filepath.Dir(dir)
	}
	t.Fatal("go.mod not found above the test directory")
	return ""
}

// newHelm returns the pinned helm from <repo>/.cache/bin, installing it there first if it is
// missing or another version (a few minutes, once).
func newHelm(t *testing.T) helmCLI {
	t.Helper()
	root := repoRoot(t)
	bin := filepath.Join(root, ".cache", "bin", "helm")
	if err := checkHelmVersion(bin); err != nil {
		t.Logf("installing helm %s into .cache/bin (%v)", helmVersion, err)
		ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "install", helmModule+"/cmd/helm@"+helmVersion)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOBIN="+filepath.Dir(bin), "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go install helm: %v\n%s", err, out)
		}
		if err := checkHelmVersion(bin); err != nil {
			t.Fatal(err)
		}
	}
	trackInputs(t, root, anyFile, chartDir, "helm/testdata")
	return helmCLI{bin: bin, root: root}
}

// checkHelmVersion reads the module version go install recorded in the binary.
func checkHelmVersion(bin string) error {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return err
	}
	if info.Main.Path != helmModule || info.Main.Version != helmVersion {
		return errors.New(bin + " is " + info.Main.Path + "@" + info.Main.Version + ", want " + helmVersion)
	}
	return nil
}

// run executes helm with args and returns stdout, or stderr wrapped in the error.
func (h helmCLI) run(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), helmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Dir = h.root
	// An empty HOME-independent config: no repositories, no plugins, no cache from the user.
	tmp := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(tmp, "config"),
		"HELM_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"HELM_DATA_HOME="+filepath.Join(tmp, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), errors.New(err.Error() + ": " + strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// template renders the chart with the given values files (under helm/testdata) and --set pairs.
func (h helmCLI) template(t *testing.T, valuesFiles []string, sets ...string) ([]byte, error) {
	t.Helper()
	args := []string{"template", releaseName, chartDir, "--namespace", namespace}
	for _, f := range valuesFiles {
		args = append(args, "--values", filepath.Join("helm", "testdata", f))
	}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return h.run(t, args...)
}

// renderMinimal renders the chart over minimal.yaml and the --set pairs and decodes it, failing
// the test when helm refuses.
func (h helmCLI) renderMinimal(t *testing.T, sets ...string) manifests {
	t.Helper()
	out, err := h.template(t, []string{"minimal.yaml"}, sets...)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	return decodeAll(t, out)
}

// refused renders the chart over minimal.yaml and the --set pairs, failing the test unless helm
// refuses with a message containing want, and returns helm's error.
func (h helmCLI) refused(t *testing.T, want string, sets ...string) error {
	t.Helper()
	_, err := h.template(t, []string{"minimal.yaml"}, sets...)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("rendering: %v, want a refusal containing %q", err, want)
	}
	return err
}

// lint runs helm lint --strict with one values file.
func (h helmCLI) lint(t *testing.T, valuesFile string) ([]byte, error) {
	t.Helper()
	return h.run(t, "lint", "--strict", chartDir,
		"--namespace", namespace, "--values", filepath.Join("helm", "testdata", valuesFile))
}

// trackInputs reads every file under the given directories (relative to the repository root,
// skipping .git and .cache) whose name matches keep. helm and go build read these files in
// child processes, which go test's result cache does not see; reading them here makes a change
// to the chart or the sources invalidate a cached pass.
func trackInputs(t *testing.T, root string, keep func(name string) bool, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && (d.Name() == ".git" || d.Name() == ".cache"):
				return filepath.SkipDir
			case d.IsDir() || !keep(d.Name()):
				return nil
			}
			_, err = os.ReadFile(p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// anyFile keeps every file.
func anyFile(string) bool { return true }

// buildInput keeps what go build reads.
func buildInput(name string) bool {
	return strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum" || name == "build-static"
}
