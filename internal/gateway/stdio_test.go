package gateway

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdioBackendsRefused: the README says the gateway does not start processes or speak
// stdio. A backend written as a command, or with a URL that is not HTTP, is refused when the
// configuration is loaded, naming the entry, never accepted and silently left out.
func TestStdioBackendsRefused(t *testing.T) {
	tests := []struct{ name, entry, want string }{
		{"a command", `{name: git, command: "uvx mcp-server-git"}`, "command"},
		{"a command with args", `{name: git, command: uvx, args: [mcp-server-git]}`, "command"},
		{"a stdio URL", `{name: git, url: "stdio:///usr/local/bin/mcp-server-git"}`, "upstreams[0]"},
		{"a bare command as the URL", `{name: git, url: "uvx mcp-server-git"}`, "upstreams[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "config.yaml")
			doc := "auth: {disabled: true}\nserver: {listen: \"127.0.0.1:0\"}\nupstreams:\n  - " + tt.entry + "\n"
			if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadConfig("check-config", []string{"--config", file}, func(string) string { return "" }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a refusal naming %q", err, tt.want)
			}
		})
	}
}
