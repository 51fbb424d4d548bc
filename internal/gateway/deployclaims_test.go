package gateway

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// The gateway's behaviour docs/deploy.md promises and no other test states as such (the doc's
// claims are listed with their tests in helm/deploydoc_test.go).

// TestDeployBackendCredentials: a backend receives the credential configured for it, read from
// a file (as the chart mounts Secrets), and never the client's token.
func TestDeployBackendCredentials(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	cred := filepath.Join(t.TempDir(), "alpha-token")
	if err := os.WriteFile(cred, []byte("Bearer backend-credential-of-alpha\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}}}
		c.Upstreams[0].Headers = map[string]Secret{"Authorization": {File: cred}}
	}, alpha)
	tok := mintFor(t, iss, "alice")
	alpha.Reset()
	if status, r := rawCall(t, gw, tok, "alpha__echo", `{"text":"hi"}`, ""); status != 200 || r.Error != nil {
		t.Fatalf("call: %d %+v", status, r)
	}
	calls := alpha.RequestsOf("tools/call")
	if len(calls) != 1 {
		t.Fatalf("backend got %d calls", len(calls))
	}
	if got := calls[0].Header.Values("Authorization"); len(got) != 1 || got[0] != "Bearer backend-credential-of-alpha" {
		t.Errorf("backend Authorization = %q, want the configured credential", got)
	}
	for _, ex := range alpha.Requests() {
		for name, vs := range ex.Header {
			for _, v := range vs {
				if strings.Contains(v, tok[strings.LastIndex(tok, ".")+1:]) {
					t.Errorf("the client's token reached the backend in %s", name)
				}
			}
		}
	}
}

// TestDeployStreamsUnbuffered: a streamed response tells nginx-style proxies not to buffer it.
func TestDeployStreamsUnbuffered(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, nil, alpha)
	h := modernHeaders("tools/call", "alpha__progress")
	status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"},`+
		`"name":"alpha__progress","arguments":{"steps":2}}}`)
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") || hdr.Get("X-Accel-Buffering") != "no" {
		t.Errorf("progress call: %d %q X-Accel-Buffering %q: %.200s", status, hdr.Get("Content-Type"), hdr.Get("X-Accel-Buffering"), body)
	}
}

// TestDeployConfirmationsAcrossReplicas: two replicas sharing Redis and the MRTR keys; a
// confirmation approved and used on one is refused when replayed on the other, and a replica
// whose key ring no longer holds the key that sealed a state refuses it with -32602.
func TestDeployConfirmationsAcrossReplicas(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	replica := confirmingReplicas(t, iss, alpha)
	newKey := KeyConfig{ID: "k2", Secret: Secret{Value: "another-test-only-secret-of-32-bytes!!"}}
	a, b, rotated := replica(testKeys...), replica(testKeys...), replica(newKey)
	alice := mintFor(t, iss, "alice")
	state := askConfirmation(t, a, alice)
	if _, r := rawCall(t, a, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)); r.Error != nil || r.Result.IsError {
		t.Fatalf("approved on replica A: %+v", r)
	}
	if status, r := rawCall(t, b, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)); status != 400 || r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("replayed on replica B: %d %+v, want 400 -32602", status, r)
	}
	other := askConfirmation(t, a, alice)
	if status, r := rawCall(t, rotated, alice, "alpha__echo", `{"text":"pay 10"}`, approve(other)); status != 400 || r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("state sealed with a removed key: %d %+v, want 400 -32602", status, r)
	}
	if n := toolCalls(alpha); n != 1 {
		t.Errorf("backend ran the call %d times, want once", n)
	}
}

// TestDeployKeyRotationAcrossReplicas: docs/deploy.md's three steps of a key rotation, with
// replicas of two neighbouring steps serving at once as in a rolling update (sharing Redis): a
// confirmation asked on a replica of one step is approved on a replica of the other, both
// ways, and runs. The one-step rotation the guide described before (appending the new key as
// the one that seals) fails that way: a replica not yet updated refuses what an updated one
// sealed. A ring of open-only keys alone is refused.
func TestDeployKeyRotationAcrossReplicas(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	replica := confirmingReplicas(t, iss, alpha)
	old := testKeys[0]
	cur := KeyConfig{ID: "k2", Secret: Secret{Value: "another-test-only-secret-of-32-bytes!!"}}
	openOnly := cur
	openOnly.OpenOnly = true
	steps := []Listeners{replica(old), replica(old, openOnly), replica(old, cur), replica(cur)}
	alice := mintFor(t, iss, "alice")
	runs := 0
	for i := 0; i+1 < len(steps); i++ {
		for _, p := range [][2]int{{i, i + 1}, {i + 1, i}} {
			state := askConfirmation(t, steps[p[0]], alice)
			_, r := rawCall(t, steps[p[1]], alice, "alpha__echo", `{"text":"pay 10"}`, approve(state))
			if r.Error != nil || r.Result.IsError {
				t.Errorf("asked on step %d, approved on step %d: %+v", p[0], p[1], r)
				continue
			}
			runs++
		}
	}
	if n := toolCalls(alpha); n != runs {
		t.Errorf("backend ran %d calls, want %d", n, runs)
	}
	oneStep := askConfirmation(t, steps[2], alice)
	if status, r := rawCall(t, steps[0], alice, "alpha__echo", `{"text":"pay 10"}`, approve(oneStep)); status != 400 || r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("sealing with the new key before every replica holds it: %d %+v, want 400 -32602 on a replica without it", status, r)
	}
	cfg := testConfig("error", "text", alpha)
	cfg.MRTR.Keys = []KeyConfig{openOnly}
	if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), "mrtr.keys: every key is openOnly") {
		t.Errorf("only open-only keys: %v, want mrtr.keys refused", err)
	}
}

// confirmingReplicas returns a function starting a replica with the given MRTR keys, all of them
// sharing one Redis, trusting iss, in front of alpha, and confirming every call of its echo.
func confirmingReplicas(t *testing.T, iss *devissuer.Issuer, alpha *mcptest.Server) func(keys ...KeyConfig) Listeners {
	redis := testredis.Start(t)
	return func(keys ...KeyConfig) Listeners {
		return startTestGateway(t, func(c *Config) {
			trustIssuers(c, iss)
			c.MRTR.Keys = keys
			c.Redis.URL = redis.URL()
			c.Auth.Policy.Rules = []authz.RuleConfig{
				{ID: "confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm}}
		}, alpha)
	}
}

// TestDeployEnvironmentOverridesFile: an MCPGW_* variable (as the chart's extraEnv sets them)
// wins over the same setting in the configuration file.
func TestDeployEnvironmentOverridesFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	yaml := "admin: {listen: \"127.0.0.1:9091\"}\nauth: {disabled: true}\nupstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\"}]\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"MCPGW_ADMIN_LISTEN": "127.0.0.1:9092"}
	cfg, err := loadConfig("check-config", []string{"--config", file, "--listen", "127.0.0.1:0"},
		func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Admin.Listen != "127.0.0.1:9092" {
		t.Errorf("admin.listen = %q, want the environment's 127.0.0.1:9092", cfg.Admin.Listen)
	}
}
