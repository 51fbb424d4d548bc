package gateway

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/upstreams"
)

// TestUserOAuthConfig: check-config accepts a per-user backend with what it needs and names
// every missing or conflicting setting otherwise, all at once, never a secret's value.
func TestUserOAuthConfig(t *testing.T) {
	const base = "server: {publicURL: https://gw.example/mcp}\n" +
		"auth: {issuers: [{issuer: https://id.example, audiences: [gw]}]}\n"
	const approval = "approval: {clientID: pages, clientSecret: {value: pages-secret}}\n"
	const keys = "userOAuth: {keys: [{id: v1, secret: {value: 0123456789abcdef0123456789abcdef-vault}}]}\n"
	const upstream = "upstreams:\n- name: tracker\n  url: https://mcp.tracker.example/mcp\n  auth:\n    type: userOAuth\n"
	for _, tt := range []struct {
		name, yaml string
		want       []string // empty: valid
	}{
		{"valid", base + approval + keys + upstream + "    clientID: gw\n    clientSecret: {value: s}\n    authServer: https://as.example\n", nil},
		{"a public client without authServer", base + approval + keys + upstream + "    clientID: gw\n", nil},
		{"a secret without authServer", base + approval + keys + upstream + "    clientID: gw\n    clientSecret: {value: s}\n",
			[]string{"upstreams[0].auth.authServer: required with a clientSecret", "resource metadata names"}},
		{"metadata document", base + approval + keys + upstream + "    registration: metadataDocument\n", nil},
		{"nothing it needs", base + upstream, []string{"approval", "userOAuth.keys", "clientID", "required with registration static"}},
		{"a short vault key", base + approval + upstream + "    clientID: gw\n" +
			"userOAuth: {keys: [{id: v1, secret: {value: short}}]}\n", []string{"userOAuth.keys[0].secret", "too short"}},
		{"settings of other types", base + approval + keys + upstream + "    clientID: gw\n    tokenURL: https://t.example/token\n",
			[]string{"tokenURL, audience"}},
		{"a client for a self-registering type", base + approval + keys + upstream + "    registration: dynamic\n    clientID: gw\n",
			[]string{"the dynamic registration makes its own client"}},
		{"a consentTTL under a minute", base + approval + upstream + "    clientID: gw\n" +
			"userOAuth: {consentTTL: 30s, keys: [{id: v1, secret: {value: 0123456789abcdef0123456789abcdef-vault}}]}\n", []string{"userOAuth.consentTTL", "want 1m to 1h0m0s"}},
		{"a consentTTL over an hour, records over 1 MiB", base + approval + upstream + "    clientID: gw\n" +
			"userOAuth: {consentTTL: 61m, maxRecordBytes: 1048577, keys: [{id: v1, secret: {value: 0123456789abcdef0123456789abcdef-vault}}]}\n",
			[]string{"userOAuth.consentTTL", "userOAuth.maxRecordBytes", "to 1048576"}},
		{"a refresh cooldown under a second", base + approval + upstream + "    clientID: gw\n" +
			"userOAuth: {refreshCooldown: 500ms, keys: [{id: v1, secret: {value: 0123456789abcdef0123456789abcdef-vault}}]}\n",
			[]string{"userOAuth.refreshCooldown: 500ms: want 1s to 5m0s"}},
		{"a refresh cooldown over five minutes", base + approval + upstream + "    clientID: gw\n" +
			"userOAuth: {refreshCooldown: 301s, keys: [{id: v1, secret: {value: 0123456789abcdef0123456789abcdef-vault}}]}\n",
			[]string{"userOAuth.refreshCooldown: 5m1s: want 1s to 5m0s"}},
		{"the bounds themselves", base + approval + upstream + "    clientID: gw\n" +
			"userOAuth: {consentTTL: 1h, maxRecordBytes: 1048576, refreshCooldown: 1s, keys: [{id: v1, secret: {value: 0123456789abcdef0123456789abcdef-vault}}]}\n", nil},
		{"record lifetimes under an hour, max age under idle", base + approval + upstream + "    clientID: gw\n" +
			"userOAuth: {recordIdle: 30m, recordMaxAge: 20m, keys: [{id: v1, secret: {value: 0123456789abcdef0123456789abcdef-vault}}]}\n",
			[]string{"userOAuth.recordIdle: 30m0s: want at least 1h", "userOAuth.recordMaxAge: 20m0s: want at least 1h0m0s and at least recordIdle"}},
		{"record lifetimes set", base + approval + upstream + "    clientID: gw\n" +
			"userOAuth: {recordIdle: 168h, recordMaxAge: 2160h, keys: [{id: v1, secret: {value: 0123456789abcdef0123456789abcdef-vault}}]}\n", nil},
		{"a max age under the default idle", base + approval + upstream + "    clientID: gw\n" +
			"userOAuth: {recordMaxAge: 168h, keys: [{id: v1, secret: {value: 0123456789abcdef0123456789abcdef-vault}}]}\n",
			[]string{"userOAuth.recordMaxAge", "at least recordIdle (720h0m0s)"}},
		{"an unknown registration", base + approval + keys + upstream + "    registration: manual\n", []string{`"manual": want static`}},
		{"an authorization server in clear", base + approval + keys + upstream + "    clientID: gw\n    authServer: http://as.example\n",
			[]string{"want https"}},
		{"a path taken by the endpoint", base + approval + upstream + "    clientID: gw\n" +
			"userOAuth: {path: /mcp, keys: [{id: v1, secret: {value: 0123456789abcdef0123456789abcdef-vault}}]}\n", []string{"userOAuth.path"}},
		{"authorization server settings on another type", base + "upstreams:\n- name: a\n  url: https://a.example/mcp\n  auth:\n" +
			"    type: clientCredentials\n    tokenURL: https://t.example/token\n    clientID: gw\n    clientSecret: {value: s}\n" +
			"    registration: dynamic\n", []string{"apply to type userOAuth only"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(file, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := loadConfig("check-config", []string{"--config", file}, func(string) string { return "" }, io.Discard)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if note := cfg.userOAuthNote(); !strings.Contains(note, "per-user OAuth: tracker (connect pages at /connect/)") ||
					!strings.Contains(note, "run a single replica") || !strings.Contains(note, "/connect/callback/tracker") {
					t.Errorf("check-config's note: %q", note)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "0123456789abcdef") || strings.Contains(err.Error(), "pages-secret") {
				t.Errorf("the error repeats a secret:\n%v", err)
			}
		})
	}
}

// TestUserOAuthBackendDefaults: a per-user backend's timeout and refresh margin, left unset,
// are the defaults docs/configuration.md gives upstreams[].auth (generated from
// configDefaults), not the useroauth package's own; set, they are kept.
func TestUserOAuthBackendDefaults(t *testing.T) {
	c := &Config{Upstreams: []UpstreamConfig{{UpstreamConfig: upstreams.UpstreamConfig{Name: "tracker", URL: "https://mcp.tracker.example/mcp"}}}}
	c.Upstreams[0].Auth.Type = upstreams.AuthUserOAuth
	b := c.userOAuthBackend(0, "")
	d := configDefaults()
	if b.Timeout != d["upstreams[].auth.timeout"] || b.RefreshBefore != d["upstreams[].auth.refreshBefore"] {
		t.Errorf("unset: timeout %v, refreshBefore %v; documented %v, %v", b.Timeout, b.RefreshBefore,
			d["upstreams[].auth.timeout"], d["upstreams[].auth.refreshBefore"])
	}
	c.Upstreams[0].Auth.Timeout, c.Upstreams[0].Auth.RefreshBefore = 3*time.Second, 2*time.Minute
	if b := c.userOAuthBackend(0, ""); b.Timeout != 3*time.Second || b.RefreshBefore != 2*time.Minute {
		t.Errorf("set: timeout %v, refreshBefore %v", b.Timeout, b.RefreshBefore)
	}
}
