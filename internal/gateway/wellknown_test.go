package gateway

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIssuerIsNotItsDiscoveryDocument: an issuer written as the URL of its discovery document
// (…/.well-known/openid-configuration or …/.well-known/oauth-authorization-server, what an
// identity provider's console shows) is refused by check-config and serve, under its key path:
// discovery would look for the document under it, and no token's "iss" is that URL. The same
// for a per-user OAuth backend's authServer.
func TestIssuerIsNotItsDiscoveryDocument(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	if err := os.WriteFile(key, []byte(strings.Repeat("k", 40)), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := `server: {listen: "127.0.0.1:0", publicURL: "https://mcp.example.com/mcp"}
admin: {listen: "127.0.0.1:0"}
auth:
  issuers:
    - issuer: "https://idp.example.com/realms/x/.well-known/openid-configuration"
    - issuer: "https://idp2.example.com/.well-known/oauth-authorization-server/"
    - issuer: "https://idp3.example.com/realms/y"
  policy: {rules: [{id: r, issuers: ["*"], anyScope: [s]}]}
approval: {clientID: c, issuer: "https://idp3.example.com/realms/y"}
userOAuth: {keys: [{id: v1, secret: {file: ` + key + `}}]}
upstreams:
  - {name: a, url: "http://127.0.0.1:1/mcp", auth: {type: userOAuth, clientID: c, authServer: "https://as.example.com/.well-known/openid-configuration"}}
`
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"check-config", "serve"} {
		_, err := loadConfig(cmd, []string{"--config", file}, func(string) string { return "" }, io.Discard)
		for _, path := range []string{"auth.issuers[0].issuer", "auth.issuers[1].issuer", "upstreams[0].auth.authServer"} {
			if err == nil || !strings.Contains(err.Error(), path+": ") || !strings.Contains(err.Error(), "not its discovery document") {
				t.Errorf("%s: %s not refused as a discovery document's URL: %v", cmd, path, err)
			}
		}
		if err != nil && strings.Contains(err.Error(), "issuers[2]") {
			t.Errorf("%s: the issuer itself is refused: %v", cmd, err)
		}
	}
}
