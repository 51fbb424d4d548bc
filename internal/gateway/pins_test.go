package gateway

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

var updatePins = flag.Bool("update-pins", false, "rewrite testdata/pins/*.golden from the current 'gateway pins' output")

func pinsGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	mcptest.Golden(t, filepath.Join("testdata", "pins", name), got, *updatePins, "-update-pins")
}

func noopTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
}

func noopPrompt(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{}, nil
}

func noopResource(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{}, nil
}

func ptr[T any](v T) *T { return &v }

func readTool(extra map[string]any) *mcp.Tool {
	props := map[string]any{"path": map[string]any{"type": "string", "description": "file to read"}}
	for k, v := range extra {
		props[k] = v
	}
	return &mcp.Tool{Name: "read", Title: "Read", Description: "Read a file.",
		InputSchema: map[string]any{"type": "object", "properties": props, "required": []any{"path"}, "additionalProperties": false},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}}
}

func deleteTool(destructive bool) *mcp.Tool {
	return &mcp.Tool{Name: "delete", Description: "Delete a file.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}},
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(destructive), OpenWorldHint: ptr(false)}}
}

func writePinsConfig(t *testing.T, backends ...*mcptest.Server) string {
	t.Helper()
	return writeConfigWith(t, "", backends...)
}

// writeConfigWith writes a configuration file of the pins commands: loopback listeners, no
// authentication, the extra YAML sections, and backends.
func writeConfigWith(t *testing.T, extra string, backends ...*mcptest.Server) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("server:\n  listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\nauth:\n  disabled: true\nlog:\n  level: error\n" + extra + "upstreams:\n")
	for _, s := range backends {
		b.WriteString("  - name: " + s.Name() + "\n    url: " + s.URL() + "\n    timeout: 5s\n")
	}
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func runGateway(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, "dev", args, func(string) string { return "" }, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// TestPinsWriteDiff drives 'gateway pins write' and 'gateway pins diff' against real go-sdk
// backends: the lock file and the diff are golden, a backend changing its tools at run time is
// drift with exit status 3, and re-pinning clears it.
func TestPinsWriteDiff(t *testing.T) {
	files := mcptest.StartServer(t, "files", mcptest.WithoutDefaults(), mcptest.WithPageSize(1),
		mcptest.WithInstructions("Use the file tools to read the project."),
		mcptest.WithTool(readTool(nil), noopTool),
		mcptest.WithTool(deleteTool(true), noopTool),
		mcptest.WithPrompt(&mcp.Prompt{Name: "summarise", Description: "Summarise a file",
			Arguments: []*mcp.PromptArgument{{Name: "path", Required: true}}}, noopPrompt),
		mcptest.WithResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{path}", Name: "file", MIMEType: "text/plain"}, noopResource))
	web := mcptest.StartServer(t, "web", mcptest.WithoutDefaults(),
		mcptest.WithTool(&mcp.Tool{Name: "fetch", Description: "Fetch a URL.",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"url": map[string]any{"type": "string"}}}}, noopTool))
	cfg := writePinsConfig(t, files, web)
	lockPath := filepath.Join(t.TempDir(), "pins.yaml")

	out, _, err := runGateway(t, "pins", "write", "--config", cfg, "--out", lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if out != "wrote 6 pin(s) for 2 backend(s) to "+lockPath+"\n" {
		t.Errorf("write said %q", out)
	}
	written, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	pinsGolden(t, "write.golden.yaml", written)
	lock, err := pins.LoadLock(lockPath)
	if err != nil {
		t.Fatalf("the written lock file does not load: %v", err)
	}
	if lock.Backends["files"].Get(pins.KindTool, "read") == nil || lock.Backends["web"].Get(pins.KindTool, "fetch") == nil {
		t.Fatalf("backend-side names not pinned:\n%s", written)
	}

	out, _, err = runGateway(t, "pins", "diff", "--config", cfg, "--pins", lockPath)
	if err != nil || !strings.HasPrefix(out, "no drift") {
		t.Fatalf("diff right after write: %q %v", out, err)
	}

	// The backends change what their tools are, without restarting.
	files.MCP().AddTool(readTool(map[string]any{"cmd": map[string]any{"type": "string"}}), noopTool)
	files.MCP().AddTool(deleteTool(false), noopTool)
	files.MCP().AddTool(&mcp.Tool{Name: "exec", Description: "Run a command.", InputSchema: map[string]any{"type": "object"}}, noopTool)
	web.MCP().AddTool(&mcp.Tool{Name: "fetch", Description: "Fetch a URL.\u200b\U000E0069\U000E0067\U000E006E",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"url": map[string]any{"type": "string"}}}}, noopTool)

	out, _, err = runGateway(t, "pins", "diff", "--config", cfg, "--pins", lockPath)
	var de driftError
	if !errors.As(err, &de) || de.ExitCode() != exitDrift || de.n != 4 {
		t.Fatalf("diff after the change: err %v, want drift of 4 items", err)
	}
	pinsGolden(t, "diff.golden.txt", []byte(out))
	for _, want := range []string{
		"'files' tool 'delete': destructive-hint-cleared,annotations-changed",
		"'files' tool 'exec': new",
		"'files' tool 'read': input-schema-widened,text-changed",
		"'web' tool 'fetch': invisible-characters,text-changed",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("diff lacks %q:\n%s", want, out)
		}
	}
	if unchanged, _ := os.ReadFile(lockPath); !bytes.Equal(unchanged, written) {
		t.Error("diff modified the lock file")
	}

	// Re-pinning accepts the change; the invisible characters are still a finding.
	_, stderr, err := runGateway(t, "pins", "write", "--config", cfg, "--out", lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, `warning: web tool "fetch": 2 run(s) of invisible characters, first U+200B at /description`) {
		t.Errorf("no warning about pinning invisible characters: %q", stderr)
	}
	out, _, err = runGateway(t, "pins", "diff", "--config", cfg, "--pins", lockPath)
	if !errors.As(err, &de) || de.n != 1 || !strings.Contains(out, "'web' tool 'fetch': invisible-characters\n") {
		t.Errorf("after re-pinning: %v\n%s", err, out)
	}
}

// TestPinsWriteFailsClosed: a backend that cannot be fetched fails the command and leaves the
// existing lock file alone, rather than writing one without that backend.
func TestPinsWriteFailsClosed(t *testing.T) {
	up := mcptest.StartServer(t, "up", mcptest.WithoutDefaults(), mcptest.WithTool(deleteTool(true), noopTool))
	down := mcptest.StartServer(t, "down")
	cfg := writePinsConfig(t, up, down)
	down.Close()
	lockPath := filepath.Join(t.TempDir(), "pins.yaml")
	if err := os.WriteFile(lockPath, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runGateway(t, "pins", "write", "--config", cfg, "--out", lockPath)
	if err == nil || !strings.Contains(err.Error(), "down") {
		t.Fatalf("write with a backend down: %v", err)
	}
	if got, _ := os.ReadFile(lockPath); string(got) != "previous" {
		t.Errorf("lock file replaced: %q", got)
	}
	var de driftError
	if _, _, err := runGateway(t, "pins", "diff", "--config", cfg, "--pins", lockPath); err == nil || errors.As(err, &de) {
		t.Errorf("diff with a broken lock file and a backend down: %v", err)
	}
}

// TestPinsWriteSkipsBackendsNotPinned: a backend whose pins are off (one whose tools only a
// caller's own token may list, say, so that write could never fetch it) is left out of write
// and diff, and write names it, instead of failing the lock file of every other backend.
func TestPinsWriteSkipsBackendsNotPinned(t *testing.T) {
	up := mcptest.StartServer(t, "up", mcptest.WithoutDefaults(), mcptest.WithTool(deleteTool(true), noopTool))
	down := mcptest.StartServer(t, "down")
	lockPath := filepath.Join(t.TempDir(), "pins.yaml")
	cfg := writeConfigWith(t, "pins:\n  lockFile: "+lockPath+"\n  backends: {down: {mode: off}}\n", up, down)
	down.Close()
	out, _, err := runGateway(t, "pins", "write", "--config", cfg, "--out", lockPath)
	if err != nil {
		t.Fatalf("write with an unpinned backend down: %v", err)
	}
	if want := "wrote 1 pin(s) for 1 backend(s) to " + lockPath + "\nnot pinned (pins mode off): down\n"; out != want {
		t.Errorf("write said %q, want %q", out, want)
	}
	lock, err := pins.LoadLock(lockPath)
	if err != nil || lock.Backends["up"] == nil || lock.Backends["down"] != nil {
		t.Fatalf("lock file: %v %+v", err, lock)
	}
	// A lock file written before the backend was switched off still names it: diff does not
	// report it removed.
	lock.Backend("down")
	if err := os.WriteFile(lockPath, lock.Marshal(), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, err := runGateway(t, "pins", "diff", "--config", cfg, "--pins", lockPath); err != nil || !strings.HasPrefix(out, "no drift") {
		t.Fatalf("diff: %q %v", out, err)
	}
}

// TestPinsWriteWithTheDeployedConfig: docs/pinning.md's flow runs pins write with the
// configuration that will be deployed, which names the lock file: the first write, before that
// file exists, and the write after a backend was added, which the old file lacks, both work,
// while check-config (serve) refuses the configuration until the file covers every backend.
func TestPinsWriteWithTheDeployedConfig(t *testing.T) {
	one := mcptest.StartServer(t, "one", mcptest.WithoutDefaults(), mcptest.WithTool(readTool(nil), noopTool))
	two := mcptest.StartServer(t, "two", mcptest.WithoutDefaults(), mcptest.WithTool(deleteTool(true), noopTool))
	lockPath := filepath.Join(t.TempDir(), "pins.yaml")
	extra := "pins: {mode: lockfile, lockFile: " + lockPath + "}\n"
	for i, cfg := range []string{writeConfigWith(t, extra, one), writeConfigWith(t, extra, one, two)} {
		if _, _, err := runGateway(t, "check-config", "--config", cfg); err == nil || !strings.Contains(err.Error(), "pins.lockFile") {
			t.Fatalf("configuration %d: check-config before pins write: %v, want the lock file refused", i, err)
		}
		if _, _, err := runGateway(t, "pins", "diff", "--config", cfg, "--pins", os.DevNull); err == nil || strings.Contains(err.Error(), "pins.lockFile") {
			t.Errorf("configuration %d: pins diff against an empty file: %v, want it to compare rather than refuse the configuration", i, err)
		}
		if out, _, err := runGateway(t, "pins", "write", "--config", cfg, "--out", lockPath); err != nil {
			t.Fatalf("configuration %d: pins write: %v", i, err)
		} else if want := fmt.Sprintf("for %d backend(s) to %s\n", i+1, lockPath); !strings.HasSuffix(out, want) {
			t.Errorf("configuration %d: pins write said %q, want it to end %q", i, out, want)
		}
		if _, _, err := runGateway(t, "check-config", "--config", cfg); err != nil {
			t.Fatalf("configuration %d: check-config after pins write: %v", i, err)
		}
	}
}

func TestPinsUsage(t *testing.T) {
	if _, _, err := runGateway(t, "pins"); err == nil {
		t.Error("no sub-command accepted")
	}
	if _, _, err := runGateway(t, "pins", "bogus"); err == nil {
		t.Error("unknown sub-command accepted")
	}
	if _, _, err := runGateway(t, "pins", "diff", "--config", "x.yaml"); err == nil || !strings.Contains(err.Error(), "--pins is required") {
		t.Errorf("diff without --pins: %v", err)
	}
	if _, _, err := runGateway(t, "pins", "write", "--out"); err == nil {
		t.Error("--out without a value accepted")
	}
}

// TestPinsLegacyBackend: a pre-2026 backend (reached through the bridge) is pinned from the same
// definition fields as a modern one, so the same tool gives the same fingerprint on both.
func TestPinsLegacyBackend(t *testing.T) {
	modern := mcptest.StartServer(t, "modern", mcptest.WithoutDefaults(), mcptest.WithTool(deleteTool(true), noopTool))
	legacy := mcptest.StartLegacyServer(t, "legacy", mcptest.WithoutDefaults(), mcptest.WithTool(deleteTool(true), noopTool),
		mcptest.WithInstructions("Legacy instructions."))
	cfg := writePinsConfig(t, modern, legacy)
	out, _, err := runGateway(t, "pins", "write", "--config", cfg, "--out", "-")
	if err != nil {
		t.Fatal(err)
	}
	lock, err := pins.ParseLock([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	m, l := lock.Backends["modern"].Get(pins.KindTool, "delete"), lock.Backends["legacy"].Get(pins.KindTool, "delete")
	if m == nil || l == nil || m.Fingerprint != l.Fingerprint {
		t.Fatalf("modern and legacy pins differ:\n%s", out)
	}
	if in := lock.Backends["legacy"].Instructions; in == nil || in.Value != "Legacy instructions." {
		t.Errorf("legacy instructions not pinned:\n%s", out)
	}
}

// TestPinsHelperProcess is not a test: TestPinsExitStatus runs the test binary as the gateway
// process through it, so that the process's exit status is what is checked.
func TestPinsHelperProcess(t *testing.T) {
	args := os.Getenv("GATEWAY_PINS_HELPER_ARGS")
	if args == "" {
		return
	}
	os.Exit(Main(t.Context(), "dev", strings.Split(args, "\n"), os.Getenv, os.Stdout, os.Stderr))
}

// TestPinsExitStatus: the gateway process exits 0 without drift, 3 with drift and 1 when it
// cannot compare, so a pipeline can tell them apart.
func TestPinsExitStatus(t *testing.T) {
	files := mcptest.StartServer(t, "files", mcptest.WithoutDefaults(), mcptest.WithTool(deleteTool(true), noopTool))
	cfg := writePinsConfig(t, files)
	lockPath := filepath.Join(t.TempDir(), "pins.yaml")
	if _, _, err := runGateway(t, "pins", "write", "--config", cfg, "--out", lockPath); err != nil {
		t.Fatal(err)
	}
	status := func(args ...string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestPinsHelperProcess$")
		cmd.Env = append(os.Environ(), "GATEWAY_PINS_HELPER_ARGS="+strings.Join(args, "\n"))
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := status("pins", "diff", "--config", cfg, "--pins", lockPath); code != 0 {
		t.Errorf("no drift: exit %d\n%s", code, out)
	}
	files.MCP().AddTool(deleteTool(false), noopTool)
	if code, out := status("pins", "diff", "--config", cfg, "--pins", lockPath); code != exitDrift || !strings.Contains(out, "destructive-hint-cleared") {
		t.Errorf("drift: exit %d, want %d\n%s", code, exitDrift, out)
	}
	if code, out := status("pins", "diff", "--config", cfg, "--pins", lockPath+".missing"); code != 1 {
		t.Errorf("missing lock file: exit %d, want 1\n%s", code, out)
	}
}

// TestPinsByFlagsAlone: the pins commands open no listener, so a backend named by flag with
// --no-auth is pinned as it is served by `gateway serve --upstream … --no-auth`, without the
// refusal of --no-auth on the default listener ":8080", which guards what a listener would
// serve; serve and check-config still refuse it there.
func TestPinsByFlagsAlone(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	flags := []string{"--no-auth", "--upstream", "alpha=" + alpha.URL()}
	code, out, errOut := runMain(append([]string{"pins", "write", "--out", "-"}, flags...), nil)
	if code != 0 || !strings.Contains(out, "'alpha':") {
		t.Fatalf("pins write by flags: exit %d\n%s%s", code, out, errOut)
	}
	lock := filepath.Join(t.TempDir(), "pins.yaml")
	if err := os.WriteFile(lock, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runMain(append([]string{"pins", "diff", "--pins", lock}, flags...), nil); code != 0 {
		t.Errorf("pins diff by flags: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runMain(append([]string{"check-config"}, flags...), nil)
	if code == 0 || !strings.Contains(errOut, `refused on the non-loopback listener ":8080" without --force`) {
		t.Errorf("check-config --no-auth on :8080: exit %d\n%s", code, errOut)
	}
}
