package gateway

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestResourceCaseInsensitivePaths: a backend that opens files case-insensitively (as macOS and
// Windows do) and is marked caseInsensitivePaths cannot be made to read a denied file through a
// case variant of its URI; what is not denied it still reads under any case.
func TestResourceCaseInsensitivePaths(t *testing.T) {
	iss := newIssuer(t)
	mac := startFSBackend(t)
	mac.caseless = true
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.HealthInterval = time.Hour
		c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: "mac", URL: mac.srv.URL + "/mcp",
			Protocol: "2026-07-28", Timeout: 5 * time.Second}, CaseInsensitivePaths: true})
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "no-secret", Resources: []string{"file:///secret/*"}, Effect: authz.EffectDeny},
			{ID: "files", Resources: []string{"file:///**"}},
		}
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "nopublic", Include: []mcphttp.SelectorConfig{{Upstream: "mac"}},
			Exclude: []mcphttp.SelectorConfig{{Upstream: "mac", Resources: []string{"file:///public/*"}, Tools: []string{}, Prompts: []string{}}}}}
	})
	f := &resFixture{gw: gw, fs: mac, tok: mint(t, iss, devissuer.Claims{"sub": "mallory"})}
	for _, uri := range []string{"file:///SECRET/key", "file:///Secret/KEY", "file:///secret/Key", "file:///ſecret/key"} {
		status, body := f.read(t, "mac+"+uri)
		if status != http.StatusBadRequest || !strings.Contains(body, "-32602") || strings.Contains(body, fsSecret) {
			t.Errorf("reading %s through the marked backend: %d %s", uri, status, body)
		}
	}
	if reads := mac.snapshot(); len(reads) != 0 {
		t.Fatalf("a denied case variant reached the backend: %+v", reads)
	}
	status, body := f.read(t, "mac+file:///PUBLIC/A.TXT")
	if status != http.StatusOK || !strings.Contains(body, "public text") {
		t.Errorf("reading a case variant of a public file: %d %s", status, body)
	}
	// A tool set is a boundary too: what it excludes it excludes under any case.
	f.set = "nopublic"
	if status, body := f.read(t, "mac+file:///PUBLIC/A.TXT"); status != http.StatusBadRequest || strings.Contains(body, "public text") {
		t.Errorf("reading a case variant of a file the set excludes: %d %s", status, body)
	}
}

// TestCaseInsensitivePathsConfig: check-config and serve's loader accept the setting and the
// policy receives the marked backends.
func TestCaseInsensitivePathsConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	yaml := "upstreams:\n- name: mac\n  url: http://127.0.0.1:1/mcp\n  caseInsensitivePaths: true\n- name: lin\n  url: http://127.0.0.1:2/mcp\n" +
		"auth: { disabled: true }\nserver: { listen: \"127.0.0.1:0\" }\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), "test", []string{"check-config", "--config", file}, func(string) string { return "" }, &out, &errOut); err != nil {
		t.Fatalf("check-config: %v", err)
	}
	cfg, err := loadStatic([]string{"--config", file})
	if err != nil {
		t.Fatal(err)
	}
	if got := caseInsensitiveUpstreams(cfg.Upstreams); len(got) != 1 || got[0] != "mac" {
		t.Errorf("case-insensitive backends = %q, want [mac]", got)
	}
}
