package helm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// instruction is one Dockerfile instruction with its continuation lines joined.
type instruction struct {
	cmd  string
	args string
}

func parseDockerfile(t *testing.T, src []byte) []instruction {
	t.Helper()
	var out []instruction
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDockerfile reads the Dockerfile (there is no Docker engine in CI) and checks it against
// go.mod and the chart: the Go release go.mod requires, same build script, cached module layer, distroless
// nonroot runtime, and the ports, user and command the Deployment relies on.
func TestDockerfile(t *testing.T) {
	h := newHelm(t)
	ins := parseDockerfile(t, readFile(t, h, "Dockerfile"))
	out, err := h.template(t, []string{"minimal.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	dep := find[*appsv1.Deployment](t, decodeAll(t, out), fullname)
	checkBuildStage(t, ins, goToolchain(t, readFile(t, h, "go.mod")))
	checkRuntimeStage(t, ins, dep.Spec.Template.Spec)
}

// goToolchain returns the Go release go.mod requires to build: its toolchain directive's
// ("toolchain go1.26.9" gives "1.26.9"), else its go directive's ("go 1.26.8" gives "1.26.8").
// The golang images set GOTOOLCHAIN=local, so a builder older than that refuses to build, and
// the tag of a minor release alone ("golang:1.26") is whichever patch release the machine
// pulled last.
func goToolchain(t *testing.T, gomod []byte) string {
	t.Helper()
	if m := regexp.MustCompile(`(?m)^toolchain go(\d+\.\d+\.\d+)\s*$`).FindSubmatch(gomod); m != nil {
		return string(m[1])
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+\.\d+)\s*$`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("no go directive naming a patch release (go 1.N.P) in go.mod")
	}
	return string(m[1])
}

func checkBuildStage(t *testing.T, ins []instruction, goVersion string) {
	t.Helper()
	idx := func(pred func(instruction) bool) int { return slices.IndexFunc(ins, pred) }
	if i := idx(func(in instruction) bool { return in.cmd == "ARG" && in.args == "GO_VERSION="+goVersion }); i < 0 {
		t.Errorf("want ARG GO_VERSION=%s, the Go release go.mod requires", goVersion)
	}
	if i := idx(func(in instruction) bool {
		return in.cmd == "FROM" && strings.Contains(in.args, "golang:${GO_VERSION}") && strings.HasSuffix(in.args, "AS build")
	}); i < 0 {
		t.Error("want a golang:${GO_VERSION} build stage")
	}
	// Multi-platform builds cross-compile on the build machine, without emulation.
	if i := idx(func(in instruction) bool {
		return in.cmd == "FROM" && strings.HasPrefix(in.args, "--platform=$BUILDPLATFORM golang:")
	}); i < 0 {
		t.Error("want the build stage on --platform=$BUILDPLATFORM")
	}
	if i := idx(func(in instruction) bool {
		return in.cmd == "RUN" && strings.Contains(in.args, "GOOS=$TARGETOS GOARCH=$TARGETARCH")
	}); i < 0 {
		t.Error("want the build to target GOOS=$TARGETOS GOARCH=$TARGETARCH")
	}
	copyMod := idx(func(in instruction) bool { return in.cmd == "COPY" && in.args == "go.mod go.sum ./" })
	download := idx(func(in instruction) bool { return in.cmd == "RUN" && strings.Contains(in.args, "go mod download") })
	copyAll := idx(func(in instruction) bool { return in.cmd == "COPY" && strings.HasPrefix(in.args, ". ") })
	build := idx(func(in instruction) bool {
		return in.cmd == "RUN" && strings.Contains(in.args, buildScript+` /out/gateway "$VERSION"`)
	})
	if copyMod < 0 || download < copyMod || copyAll < download || build < copyAll {
		t.Errorf("want COPY go.mod go.sum (%d) < RUN go mod download (%d) < COPY . (%d) < RUN %s (%d)",
			copyMod, download, copyAll, buildScript, build)
	}
}

func checkRuntimeStage(t *testing.T, ins []instruction, pod corev1.PodSpec) {
	t.Helper()
	from := lastIndex(ins, "FROM")
	if from < 0 || ins[from].args != "gcr.io/distroless/static-debian12:nonroot" {
		t.Fatalf("final stage must be gcr.io/distroless/static-debian12:nonroot")
	}
	stage := map[string][]string{}
	for _, in := range ins[from+1:] {
		stage[in.cmd] = append(stage[in.cmd], in.args)
	}
	want := map[string]string{
		"USER":   "65532:65532",
		"EXPOSE": strings.Join([]string{port(pod, "mcp"), port(pod, "admin")}, " "),
		"COPY":   "--from=build /out/gateway /gateway",
	}
	for cmd, args := range want {
		if !slices.Equal(stage[cmd], []string{args}) {
			t.Errorf("%s = %q, want %q", cmd, stage[cmd], args)
		}
	}
	if u := pod.SecurityContext.RunAsUser; u == nil || *u != 65532 {
		t.Error("the chart's runAsUser must be the image's USER 65532")
	}
	if entry := jsonArray(t, stage["ENTRYPOINT"]); !slices.Equal(entry, []string{"/gateway"}) {
		t.Errorf("ENTRYPOINT = %q, want [\"/gateway\"] (exec form: no shell in the image)", entry)
	}
	if cmd := jsonArray(t, stage["CMD"]); !slices.Equal(cmd, pod.Containers[0].Args) {
		t.Errorf("CMD %q differs from the chart's args %q", cmd, pod.Containers[0].Args)
	}
	labels := strings.Join(stage["LABEL"], " ")
	for _, l := range []string{"org.opencontainers.image.source", "org.opencontainers.image.version", "org.opencontainers.image.revision", "org.opencontainers.image.title"} {
		if !strings.Contains(labels, l+"=") {
			t.Errorf("missing OCI label %s", l)
		}
	}
}

func lastIndex(ins []instruction, cmd string) int {
	for i := len(ins) - 1; i >= 0; i-- {
		if ins[i].cmd == cmd {
			return i
		}
	}
	return -1
}

func port(pod corev1.PodSpec, name string) string {
	for _, p := range pod.Containers[0].Ports {
		if p.Name == name {
			return strconv.Itoa(int(p.ContainerPort))
		}
	}
	return ""
}

func jsonArray(t *testing.T, args []string) []string {
	t.Helper()
	if len(args) != 1 {
		t.Fatalf("want exactly one instruction, got %q", args)
	}
	var v []string
	if err := json.Unmarshal([]byte(args[0]), &v); err != nil {
		t.Fatalf("%q is not in exec (JSON array) form: %v", args[0], err)
	}
	return v
}

// TestDockerignore: the build context leaves out what must not reach the builder (git history,
// caches, test output) and keeps what the build needs.
func TestDockerignore(t *testing.T) {
	root := repoRoot(t)
	var patterns []string
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, helmCLI{root: root}, ".dockerignore")))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, strings.TrimSuffix(l, "/"))
		}
	}
	for _, p := range []string{".git", ".cache", "**/*.test", "**/*.out"} {
		if !slices.Contains(patterns, p) {
			t.Errorf(".dockerignore must exclude %s", p)
		}
	}
	for _, need := range []string{"go.mod", "go.sum", ".ci", ".ci/build-static", "cmd", "*.go", "**/*.go", "internal"} {
		if slices.Contains(patterns, need) {
			t.Errorf(".dockerignore excludes %s, which the build needs", need)
		}
	}
}
