package gateway

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPagePathsTheirOwn: check-config refuses an approval page or connect page path that some
// client rewrites before sending (mcphttp.PathProblem), or that is, or holds, a path the MCP
// endpoints serve (server.path, a tool set's path, a Server Card, the protected resource
// metadata), and two page paths one under the other: each page owns every path under its own,
// and whichever route was registered last would answer in the other's place (a tool set at
// /approval/callback answered the page's sign-in callback with 405).
func TestPagePathsTheirOwn(t *testing.T) {
	const base = "server: {publicURL: https://gw.example/mcp, serverCard: {enabled: true, aiCatalog: true}}\n" +
		"auth: {issuers: [{issuer: https://id.example, audiences: [gw]}]}\n" +
		"upstreams:\n- name: tracker\n  url: https://mcp.tracker.example/mcp\n  auth:\n    type: userOAuth\n    clientID: gw\n"
	const keys = "keys: [{id: v1, secret: {value: 0123456789abcdef0123456789abcdef-vault}}]"
	page := func(approvalPath, connectPath string) string {
		return "approval: {clientID: pages, path: " + approvalPath + "}\nuserOAuth: {path: " + connectPath + ", " + keys + "}\n"
	}
	set := func(path string) string {
		return "toolsets: [{name: ro, path: " + path + ", include: [{upstream: tracker}]}]\n"
	}
	for _, tt := range []struct {
		name, yaml string
		want       string // "": valid
	}{
		{"apart", base + page("/approval", "/connect") + set("/mcp/ro"), ""},
		{"a page under the endpoint's path", base + page("/mcp/approve", "/mcp/connect") + set("/mcp/ro"), ""},
		{"a set at the page's callback", base + page("/approval", "/connect") + set("/approval/callback"),
			`approval.path: "/approval" holds "/approval/callback"`},
		{"a set at the page's path", base + page("/approval", "/connect") + set("/approval"), `approval.path: "/approval" holds "/approval"`},
		{"the endpoint's path", base + page("/mcp", "/connect"), `approval.path: "/mcp" holds "/mcp"`},
		{"a set's Server Card", base + page("/approval", "/mcp/ro/server-card") + set("/mcp/ro"),
			`userOAuth.path: "/mcp/ro/server-card" holds "/mcp/ro/server-card"`},
		{"a set's path", base + page("/approval", "/mcp/ro") + set("/mcp/ro"), `userOAuth.path: "/mcp/ro" holds "/mcp/ro"`},
		{"the metadata", base + page("/.well-known/oauth-protected-resource", "/connect"),
			`approval.path: "/.well-known/oauth-protected-resource" holds "/.well-known/oauth-protected-resource`},
		{"a set's metadata", base + page("/approval", "/.well-known/oauth-protected-resource/mcp/ro") + set("/mcp/ro"),
			`userOAuth.path: "/.well-known/oauth-protected-resource/mcp/ro" holds`},
		{"the catalog", base + page("/approval", "/.well-known/ai-catalog.json"), `userOAuth.path: "/.well-known/ai-catalog.json" holds`},
		{"the connect page under the approval page", base + page("/approval", "/approval/c"), `userOAuth.path: "/approval/c" and approval.path "/approval" overlap`},
		{"the approval page under the connect page", base + page("/connect/a", "/connect"), `userOAuth.path: "/connect" and approval.path "/connect/a" overlap`},
		{"one path", base + page("/pages", "/pages"), `userOAuth.path: "/pages" and approval.path "/pages" overlap`},
		{"a dot segment", base + page("/pages/../approval", "/connect"), `approval.path: "/pages/../approval": want no dot segment`},
		{"a percent-escape", base + page("/approval", "/c%6Fnnect"), `userOAuth.path: "/c%6Fnnect": want letters, digits`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(file, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadConfig("check-config", []string{"--config", file}, func(string) string { return "" }, io.Discard)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("want %q, got %v", tt.want, err)
			}
		})
	}
}
