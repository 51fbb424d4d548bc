package gateway

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPublishedURLsCarryNoUserInfo: every URL the gateway tells clients before they
// authenticate (the public URL, which the protected resource metadata and every 401 challenge
// name; the metadata's own links; the Server Card's website) is refused when it carries user
// information, whose password anyone could then read. check-config and serve refuse it with
// the same words, each naming its key path, all in one pass, and none shows the password.
func TestPublishedURLsCarryNoUserInfo(t *testing.T) {
	const password = "pw5ecretZ9"
	userURL := "https://ops:" + password + "@mcp.example.com/"
	settings := []string{"server.publicURL", "auth.resourceMetadata.resource",
		"auth.resourceMetadata.resourceDocumentation", "auth.resourceMetadata.resourcePolicyURI",
		"auth.resourceMetadata.resourceTosURI", "server.serverCard.websiteURL"}
	yaml := `server:
  listen: "127.0.0.1:0"
  publicURL: "` + userURL + `mcp"
  serverCard: {enabled: true, name: com.example/gw, websiteURL: "` + userURL + `site"}
admin: {listen: "127.0.0.1:0"}
auth:
  issuers: [{issuer: "http://127.0.0.1:9400"}]
  resourceMetadata:
    resource: "` + userURL + `mcp"
    resourceDocumentation: "` + userURL + `docs"
    resourcePolicyURI: "` + userURL + `policy"
    resourceTosURI: "` + userURL + `tos"
  policy: {rules: [{id: r, anyScope: [s]}]}
upstreams: [{name: a, url: "http://127.0.0.1:1/mcp"}]
`
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(string) string { return "" }
	var out, errOut bytes.Buffer
	checkErr := Run(context.Background(), "test", []string{"check-config", "--config", file}, getenv, &out, &errOut)
	// Cancelled before it starts: a serve that accepted the configuration returns at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	serveErr := Run(ctx, "test", []string{"serve", "--config", file}, getenv, &out, &errOut)
	for name, err := range map[string]error{"check-config": checkErr, "serve": serveErr} {
		if err == nil {
			t.Fatalf("%s accepted URLs with user information", name)
		}
		for _, s := range settings {
			if !strings.Contains(err.Error(), s+": ") || !strings.Contains(err.Error(), "no user information") {
				t.Errorf("%s: error does not refuse %s for its user information:\n%v", name, s, err)
			}
		}
		if strings.Contains(err.Error(), password) {
			t.Errorf("%s: error shows the password:\n%v", name, err)
		}
	}
	if checkErr != nil && serveErr != nil && checkErr.Error() != serveErr.Error() {
		t.Errorf("check-config and serve disagree:\ncheck-config: %v\nserve: %v", checkErr, serveErr)
	}
	if strings.Contains(out.String()+errOut.String(), password) {
		t.Errorf("output shows the password:\n%s%s", out.String(), errOut.String())
	}
}
