package gateway

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

const adminTestToken = "admin-token-of-the-tests-0123456789abcdef"

// TestAdminEndpointsNeedToken: the real gateway with its admin listener on every interface (as
// in the Helm chart) answers /healthz and the bare status of /readyz to anyone, as kubelet
// probes need, and /metrics, /pins, the policy explainer and the detail of /readyz (backend
// names and URLs) only with admin.token as a bearer: without it or with another, 401 and a
// Bearer challenge, and nothing of what they reveal.
func TestAdminEndpointsNeedToken(t *testing.T) {
	f := startAuthGatewayWith(t, func(c *Config) {
		c.Admin.Listen = "0.0.0.0:0"
		c.Admin.Token = Secret{Value: adminTestToken}
		c.Admin.Explain.Enabled = true
		c.Pins = &pins.Config{Mode: pins.ModeTOFU}
	})
	_, port, err := net.SplitHostPort(f.gw.Admin)
	if err != nil {
		t.Fatal(err)
	}
	admin := "http://127.0.0.1:" + port
	// The issuer's keys are fetched in the background; /readyz answers 503 until then.
	mcptest.WaitFor(t, "the gateway ready", func() bool { return readyzOK(http.DefaultClient, admin+"/readyz") == nil })
	explain := `{"token":"` + f.token(t, nil) + `","kind":"tool","upstream":"alpha","name":"echo"}`
	backendURL := f.alpha.URL()
	tests := []struct {
		method, path, body string
		open               bool   // answered without the token
		reveals            string // what only the admin may read
	}{
		{http.MethodGet, "/healthz", "", true, ""},
		{http.MethodGet, "/readyz", "", true, backendURL},
		{http.MethodGet, "/metrics", "", false, "mcp_gateway_requests_in_flight"},
		{http.MethodGet, "/pins", "", false, `"backends"`},
		{http.MethodPost, "/authz/explain", explain, false, `"rules"`},
	}
	for _, tt := range tests {
		for _, tok := range []string{"", "wrong-" + adminTestToken, adminTestToken} {
			h := http.Header{}
			if tt.body != "" {
				h.Set("Content-Type", "application/json")
			}
			if tok != "" {
				h.Set("Authorization", "Bearer "+tok)
			}
			status, hdr, body := exchange(t, tt.method, admin+tt.path, h, tt.body)
			admitted := tok == adminTestToken
			switch {
			case admitted || tt.open:
				if status != http.StatusOK {
					t.Errorf("%s with token %v: %d %.200s", tt.path, admitted, status, body)
				}
			case status != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer "):
				t.Errorf("%s with token %q: %d (WWW-Authenticate %q), want 401 with a Bearer challenge",
					tt.path, tok, status, hdr.Get("WWW-Authenticate"))
			}
			if tt.reveals != "" && strings.Contains(body, tt.reveals) != admitted {
				t.Errorf("%s with token %v: shows %q: %v", tt.path, admitted, tt.reveals, !admitted)
			}
		}
	}
}

// TestAdminAccessConfig: a configuration that would expose the admin endpoints without a
// credential, or pprof anywhere but on loopback, is refused with a message naming the fix; a
// token too short to resist guessing is refused, inline or read from its source.
func TestAdminAccessConfig(t *testing.T) {
	tests := []struct {
		yaml, wantErr string
	}{
		{"admin: {listen: \":9090\"}\n", "admin.token: required"},
		{"admin: {listen: \"0.0.0.0:9090\", token: {value: short}}\n", "admin.token: shorter than 32"},
		{"admin: {listen: \":9090\", token: {value: " + adminTestToken + ", env: X}}\n", "admin.token: exactly one"},
		{"admin: {listen: \":9090\", token: {value: " + adminTestToken + "}, pprof: true}\n", "pprof is served on a loopback-only listener only"},
		{"admin: {listen: \":9090\", token: {value: " + adminTestToken + "}, explain: {enabled: true}}\n", ""},
		{"admin: {listen: \":9090\", token: {file: /run/secrets/admin}}\n", ""},
		{"admin: {listen: \"127.0.0.1:9090\", pprof: true}\n", ""},
		{"admin: {listen: \"[::1]:9090\", pprof: true, token: {value: " + adminTestToken + "}}\n", ""},
	}
	for _, tt := range tests {
		checkAdminYAML(t, tt.yaml, tt.wantErr)
	}
	short := AdminConfig{Token: Secret{Env: "ADMIN_TOKEN"}}
	if _, err := short.resolveToken(func(string) string { return "only-20-characters.." }); err == nil ||
		!strings.Contains(err.Error(), "shorter than 32") || strings.Contains(err.Error(), "only-20") {
		t.Errorf("a short token from the environment: %v", err)
	}
}

// checkAdminYAML loads a configuration with check-config's flags (authentication off, one
// backend) and fails unless it is refused with wantErr, or accepted when wantErr is empty.
func checkAdminYAML(t *testing.T, yaml, wantErr string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadStatic([]string{"--config", file, "--no-auth", "--listen", "127.0.0.1:0",
		"--upstream", "a=http://127.0.0.1:1/mcp"}) // the secret files are examples
	if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
		t.Errorf("%q: err = %v, want %q", yaml, err, wantErr)
	}
}
