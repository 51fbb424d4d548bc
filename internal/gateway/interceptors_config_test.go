package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestInterceptorsDocExample: the configuration example of docs/interceptors.md is valid as the
// gateway checks a configuration, and sets what the page says it sets.
func TestInterceptorsDocExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "interceptors.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(raw), "```yaml\n")
	example, _, _ := strings.Cut(rest, "```")
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte("auth: {disabled: true}\nserver: {listen: \"127.0.0.1:8080\"}\n"+example), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadStatic([]string{"--config", path})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Interceptors) != 2 {
		t.Fatalf("%d interceptors", len(cfg.Interceptors))
	}
	dlp, redact := cfg.Interceptors[0], cfg.Interceptors[1]
	if dlp.FailOpen || dlp.Webhook || dlp.Timeout != 500*time.Millisecond || len(dlp.Rules) != 2 ||
		!redact.Webhook || !redact.FailOpen || redact.Type != intercept.TypeMutation {
		t.Fatalf("the example reads as %+v and %+v", dlp.Config, redact.Config)
	}
}

// TestInterceptorConfigChecked: the gateway refuses, with the rest of the configuration's
// problems, an interceptor rule whose upstream glob matches no backend and an interceptor
// problem of its own, naming each key path and never a secret's value.
func TestInterceptorConfigChecked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	yaml := `server: {listen: "127.0.0.1:8080"}
auth: {disabled: true}
upstreams: [{name: alpha, url: "http://127.0.0.1:1/mcp"}]
interceptors:
  - name: guard
    url: https://guard.example/mcp
    type: validation
    headers: {Authorization: {value: "Bearer very-secret-interceptor-token"}}
    rules: [{upstream: "beta*", tools: ["*"]}]
  - name: fix
    url: https://fix.example/mcp
    type: rewrite
    rules: [{tools: ["*"]}]
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadStatic([]string{"--config", path})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"interceptors[0].rules[0].upstream", "matches no configured upstream", "interceptors[1].type"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "very-secret-interceptor-token") {
		t.Errorf("the error quotes a secret: %v", err)
	}
}

// TestReloadInterceptors: a reload (SIGHUP) applies the interceptors of the new file to the next
// call: added, a refusal takes effect; removed, the call goes through again. An interceptor
// the process did not start with is named as needing a restart for its metric labels.
func TestReloadInterceptors(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "guard", Type: intercept.TypeValidation, Handle: intercepttest.Deny("no")}})
	plain := "auth: {disabled: true}\nupstreams:\n" + upstreamYAML(alpha)
	guarded := plain + fmt.Sprintf("interceptors:\n  - {name: guard, url: %q, type: validation, rules: [{tools: [echo]}]}\n", ics.URL())
	f := startReloadGateway(t, "30s", plain)
	cs := mcptest.Connect(t, f.url())
	echo := func() *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := echo(); res.IsError {
		t.Fatalf("before: %+v", res)
	}
	if err := f.reload(t, "30s", guarded); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if res := echo(); !res.IsError || !strings.Contains(mcptest.ResultText(res), "refused by the gateway's interceptor guard") {
		t.Fatalf("after adding the interceptor: %+v", res)
	}
	f.waitLog(t, "metric labels of interceptor guard")
	if err := f.reload(t, "30s", plain); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if res := echo(); res.IsError || len(ics.Invocations()) != 1 {
		t.Fatalf("after removing it: %+v; %d invocations", res, len(ics.Invocations()))
	}
}
