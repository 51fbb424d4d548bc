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
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: its size is set, not written.
	if err := f.Truncate(maxConfigBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	getenv := func(string) string { return "" }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, cmd := range []string{"check-config", "serve"} {
		var out, errOut bytes.Buffer
		err := Run(ctx, "test", []string{cmd, "--config", huge}, getenv, &out, &errOut)
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
