package gateway

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigFileSizeBounded: a --config path that names something far larger than any
// configuration (a device such as /dev/zero, a log, an image) is refused after reading at most
// maxConfigBytes, by check-config and serve alike, instead of being read whole into memory; a
// file of 10 MB, unusual but a configuration, is still read.
func TestConfigFileSizeBounded(t *testing.T) {
	dir := t.TempDir()
	huge := sparseFile(t, filepath.Join(dir, "huge.yaml"), maxConfigBytes+1)
	getenv := func(string) string { return "" }
	for cmd, err := range checkAndServe("--config", huge) {
		if err == nil || !strings.Contains(err.Error(), "huge.yaml is larger than 32 MiB") {
			t.Errorf("%s: err = %v, want the file refused for its size", cmd, err)
		}
	}
	var b strings.Builder
	b.WriteString("server: {listen: \"127.0.0.1:0\"}\nauth: {disabled: true}\nupstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\"}]\n")
	for b.Len() < 10<<20 {
		b.WriteString("# a comment line to make the file large, as generated files sometimes are\n")
	}
	large := filepath.Join(dir, "large.yaml")
	if err := os.WriteFile(large, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig("check-config", []string{"--config", large}, getenv, &bytes.Buffer{}); err != nil {
		t.Errorf("a 10 MB configuration: %v", err)
	}
}

// TestSecretFileSizeBounded: a secret's file that is far larger than any secret (a device, a
// log) is refused by name after reading at most maxSecretFileBytes, by check-config and serve
// alike, with the setting's key path; a secret of a few kilobytes is still read.
func TestSecretFileSizeBounded(t *testing.T) {
	dir := t.TempDir()
	huge := sparseFile(t, filepath.Join(dir, "token"), maxSecretFileBytes+1)
	fine := filepath.Join(dir, "fine")
	if err := os.WriteFile(fine, []byte(strings.Repeat("k", 8<<10)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "config.yaml")
	yaml := "server: {listen: \"127.0.0.1:0\"}\nadmin: {listen: \"127.0.0.1:0\"}\nauth: {disabled: true}\n" +
		"upstreams:\n- name: a\n  url: http://127.0.0.1:1/mcp\n  headers: {X-Huge: {file: " + huge + "}, X-Fine: {file: " + fine + "}}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for cmd, err := range checkAndServe("--config", file) {
		want := "upstreams[0].headers.X-Huge: secret file " + huge + " is larger than 1024 KiB"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to contain %q", cmd, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "X-Fine") {
			t.Errorf("%s: the secret of a few kilobytes is refused: %v", cmd, err)
		}
	}
}

// sparseFile creates a file of size bytes at path without writing them (all zero) and returns
// its path.
func sparseFile(t *testing.T, path string, size int64) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkAndServe runs check-config and serve with args and returns each one's error by command.
// serve runs with its context cancelled: one that accepted the configuration returns at once.
func checkAndServe(args ...string) map[string]error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	errs := map[string]error{}
	for _, cmd := range []string{"check-config", "serve"} {
		var out, errOut bytes.Buffer
		errs[cmd] = Run(ctx, "test", append([]string{cmd}, args...), func(string) string { return "" }, &out, &errOut)
	}
	return errs
}
