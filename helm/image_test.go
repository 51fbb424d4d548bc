package helm

import (
	"context"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

const (
	buildScript = ".ci/build-static"
	// testVersion is stamped by the build and must come back from `gateway version`.
	testVersion = "v0.0.0-imagetest+1"
)

// TestBuildStatic runs the build script the Dockerfile runs and checks that its output is a
// static ELF executable (no interpreter, no dynamic section: it must start on distroless/static,
// which has no libc) carrying the stamped version.
func TestBuildStatic(t *testing.T) {
	root := repoRoot(t)
	trackInputs(t, root, buildInput, ".")
	bin := filepath.Join(t.TempDir(), "gateway")
	ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, buildScript), bin, testVersion)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		if _, statErr := os.Stat(filepath.Join(root, "cmd", "gateway")); statErr != nil {
			t.Fatalf("cmd/gateway does not exist yet, so the image cannot be built: %v\n%s", statErr, out)
		}
		t.Fatalf("%s failed (does cmd/gateway build? it must declare `var version string` in package main): %v\n%s", buildScript, err, out)
	}
	checkStaticELF(t, bin)
	if runtime.GOOS != "linux" {
		t.Skip("the linux binary cannot run on", runtime.GOOS)
	}
	out, err := exec.CommandContext(ctx, bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), testVersion) {
		t.Errorf("`gateway version` = %q (%v), want it to print %s", out, err, testVersion)
	}
}

func checkStaticELF(t *testing.T, bin string) {
	t.Helper()
	problems, err := staticELFProblems(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// staticELFProblems lists why bin is not a stripped static executable.
func staticELFProblems(bin string) ([]string, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var problems []string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			problems = append(problems, "program header "+p.Type.String()+": dynamically linked")
		}
	}
	for _, name := range []string{".interp", ".dynamic", ".dynsym"} {
		if f.Section(name) != nil {
			problems = append(problems, "section "+name+": dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		problems = append(problems, "imports shared libraries "+strings.Join(libs, ", "))
	}
	if f.Section(".symtab") != nil {
		problems = append(problems, "symbol table present: -ldflags -s was not applied")
	}
	return problems, nil
}

// TestStaticELFCheck: the check above accepts a program built the way the script builds and
// rejects a dynamically linked system binary, so TestBuildStatic can fail for the right reason.
func TestStaticELFCheck(t *testing.T) {
	dir := t.TempDir()
	src := "package main\n\nfunc main() {}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module static\n\ngo 1.26\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "static")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if p, err := staticELFProblems(bin); err != nil || len(p) > 0 {
		t.Errorf("static program rejected: %v %v", p, err)
	}
	const dynamic = "/bin/sh"
	if _, err := os.Stat(dynamic); err != nil {
		t.Skip("no", dynamic, "to compare with")
	}
	if p, err := staticELFProblems(dynamic); err != nil || len(p) == 0 {
		t.Errorf("%s accepted as static (%v)", dynamic, err)
	}
}

// TestBuildStaticUsage: bad arguments stop the script before go build runs.
func TestBuildStaticUsage(t *testing.T) {
	root := repoRoot(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no arguments", nil, "usage:"},
		{"one argument", []string{"out"}, "usage:"},
		{"space in version", []string{"out", "1 -X main.x=y"}, "VERSION must"},
		{"quote in version", []string{"out", `1"`}, "VERSION must"},
		{"empty version", []string{"out", ""}, "VERSION must"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.CommandContext(t.Context(), filepath.Join(root, buildScript), tc.args...).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
				t.Errorf("exit %v, output %q; want exit status 2 and %q", err, out, tc.want)
			}
		})
	}
}

// TestImageIsTheChartsImage: the image `make image` builds is the one the chart deploys by
// default, name and tag, and the tag is the version stamped into the binary; both come from the
// chart (values.yaml image.repository, Chart.yaml appVersion), the one place they are set.
func TestImageIsTheChartsImage(t *testing.T) {
	h := newHelm(t)
	// --no-print-directory: under `make test` this make is a sub-make, which would otherwise
	// announce the directory it enters.
	cmd := exec.CommandContext(t.Context(), "make", "--no-print-directory", "-n", "image")
	cmd.Dir = h.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n image: %v\n%s", err, out)
	}
	build := strings.Join(strings.Fields(strings.ReplaceAll(string(out), "\\\n", " ")), " ")
	tag := regexp.MustCompile(` -t (\S+):(\S+) \.$`).FindStringSubmatch(build)
	version := regexp.MustCompile(`--build-arg VERSION=(\S+)`).FindStringSubmatch(build)
	if !strings.HasPrefix(build, "docker build ") || tag == nil || version == nil {
		t.Fatalf("make -n image = %q, want docker build --build-arg VERSION=... -t NAME:TAG .", build)
	}
	rendered, err := h.template(t, []string{"minimal.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	image := gatewayContainer(t, find[*appsv1.Deployment](t, decodeAll(t, rendered), fullname).Spec.Template.Spec).Image
	if want := tag[1] + ":" + tag[2]; image != want || version[1] != tag[2] {
		t.Errorf("the chart deploys %s; make image builds %s:%s with VERSION=%s", image, tag[1], tag[2], version[1])
	}
	if tag[1] == "" || tag[2] == "" || strings.Contains(tag[2], "dev") {
		t.Errorf("image %s:%s: the chart must name a released version", tag[1], tag[2])
	}
}
