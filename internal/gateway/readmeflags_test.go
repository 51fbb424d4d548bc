package gateway

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeFlagTable: the README's flag table names exactly the MCPGW_* variables the gateway
// reads, and each setting it lists is taken from the file, then from its variable, then from
// its flag, each overriding the one before, as the README says ("Configuration comes from the
// YAML file, then MCPGW_* environment variables, then flags").
func TestReadmeFlagTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "| Flag | Env | Meaning |")
	if !ok {
		t.Fatal("the README has no flag table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	documented := regexp.MustCompile("MCPGW_[A-Z_]+").FindAllString(table, -1)
	slices.Sort(documented)
	documented = slices.Compact(documented)
	read := append(envVarNames(), "MCPGW_CONFIG")
	slices.Sort(read)
	if !slices.Equal(documented, read) {
		t.Errorf("the README's flag table names %v; the gateway reads %v", documented, read)
	}

	file := filepath.Join(t.TempDir(), "config.yaml")
	yaml := "server: {listen: \"127.0.0.1:7001\", publicURL: \"https://file.example/mcp\"}\n" +
		"admin: {listen: \"127.0.0.1:7101\"}\nlog: {level: warn, format: json}\n" +
		"upstreams: [{name: file, url: \"http://127.0.0.1:1/mcp\"}]\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"MCPGW_LISTEN": "127.0.0.1:7002", "MCPGW_ADMIN_LISTEN": "127.0.0.1:7102",
		"MCPGW_PUBLIC_URL": "https://env.example/mcp", "MCPGW_LOG_LEVEL": "error", "MCPGW_LOG_FORMAT": "text",
		"MCPGW_UPSTREAMS": "env=http://127.0.0.1:2/mcp", "MCPGW_PATH": "/env",
	}
	flags := []string{"--config", file, "--listen", "127.0.0.1:7003", "--admin-listen", "127.0.0.1:7103",
		"--public-url", "https://flag.example/mcp", "--log-level", "debug", "--log-format", "json",
		"--upstream", "flag=http://127.0.0.1:3/mcp"}
	settings := func(c *Config) []string {
		var names []string
		for _, u := range c.Upstreams {
			names = append(names, u.Name)
		}
		return []string{c.Server.Listen, c.Admin.Listen, c.Server.PublicURL, c.Log.Level, c.Log.Format,
			c.Server.Path, strings.Join(names, ",")}
	}
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"file", nil, flags[:2], []string{"127.0.0.1:7001", "127.0.0.1:7101", "https://file.example/mcp", "warn", "json", "/mcp", "file"}},
		{"environment over file", env, flags[:2], []string{"127.0.0.1:7002", "127.0.0.1:7102", "https://env.example/mcp", "error", "text", "/env", "file,env"}},
		{"flags over environment", env, flags, []string{"127.0.0.1:7003", "127.0.0.1:7103", "https://flag.example/mcp", "debug", "json", "/env", "file,env,flag"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := readConfig("serve", tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := settings(c); !slices.Equal(got, tt.want) {
				t.Errorf("settings %q, want %q", got, tt.want)
			}
		})
	}
}
