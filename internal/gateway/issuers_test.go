package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestPolicyIssuerBinding: the real gateway trusts two real issuers. A token from the partner
// issuer carrying the claims a corporate rule asks for ("groups": ["admins"]) neither lists nor
// calls what that rule grants; it gets exactly what the rule bound to its own issuer grants.
func TestPolicyIssuerBinding(t *testing.T) {
	corp, partner := newIssuer(t), newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, corp, partner)
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "corp-admins", Upstream: "alpha", Tools: []string{"*"}, Claims: map[string][]string{"groups": {"admins"}}, Issuers: []string{corp.URL()}},
			{ID: "partner-echo", Upstream: "alpha", Tools: []string{"echo"}, Issuers: []string{partner.URL()}},
		}
	}, alpha)
	url := "http://" + gw.MCP + "/mcp"
	ctx := context.Background()
	adminOf := func(iss *devissuer.Issuer) string {
		return mint(t, iss, devissuer.Claims{"sub": "same-subject", "groups": []string{"admins"}})
	}

	cs := mcptest.Connect(t, url, mcptest.WithBearer(adminOf(partner)))
	if got := toolNames(t, cs); !slices.Equal(got, []string{"alpha__echo"}) {
		t.Fatalf("partner lists %v, want only alpha__echo", got)
	}
	alpha.Reset()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 2}}); err == nil && !res.IsError {
		t.Fatal("the partner's token called a tool only the corporate rule grants")
	}
	if n := len(alpha.Forwarded()); n != 0 {
		t.Fatalf("backend received %d requests for the partner's refused call", n)
	}

	// The partner signs a token that also names the corporate issuer, in a spelling a folding
	// decoder reads as "iss" too: refused as malformed, and nothing reaches the backend.
	alpha.Reset()
	forged, err := partner.MintPayload(fmt.Appendf(nil, `{"aud":%q,"exp":%d,"groups":["admins"],"iss":%q,"iſs":%q,"sub":"same-subject"}`,
		testResource, time.Now().Add(time.Hour).Unix(), corp.URL(), partner.URL()))
	if err != nil {
		t.Fatal(err)
	}
	h := modernHeaders("tools/call", "alpha__add")
	h.Set("Authorization", "Bearer "+forged)
	status, hdr, body := post(t, url, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+testMeta+`,"name":"alpha__add","arguments":{"a":1,"b":2}}}`)
	if ch := hdr.Get("WWW-Authenticate"); status != http.StatusUnauthorized || !strings.Contains(ch, "invalid_token") {
		t.Fatalf("a partner token naming the corporate issuer: %d %q %s", status, ch, body)
	}
	if n := len(alpha.Forwarded()); n != 0 {
		t.Fatalf("backend received %d requests for a token naming two issuers", n)
	}

	cs = mcptest.Connect(t, url, mcptest.WithBearer(adminOf(corp)))
	if got := toolNames(t, cs); !slices.Contains(got, "alpha__add") || !slices.Contains(got, "alpha__echo") {
		t.Fatalf("corporate admin lists %v", got)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil || res.IsError {
		t.Fatalf("corporate admin's call: %v %+v", err, res)
	}
}

// TestCheckConfigPolicyRules: check-config refuses a confirm the gateway could not honour
// (prompts, resources and completions are never confirmed) and, with two issuers, an allow rule
// that does not say whose tokens it trusts.
func TestCheckConfigPolicyRules(t *testing.T) {
	const base = "server: {listen: \"127.0.0.1:0\", publicURL: \"https://mcp.example.com/mcp\"}\n" +
		"upstreams: [{name: gh, url: \"http://127.0.0.1:1/mcp\"}]\n"
	tests := []struct {
		name, auth, wantErr string
	}{
		{"confirm on prompts", `{issuers: [{issuer: "https://a.example"}], policy: {rules: [{id: p, prompts: ["*"], confirm: true}]}}`,
			`auth.policy.rules[0].confirm: rule "p": applies to tool calls only`},
		{"confirm on resources beside tools", `{issuers: [{issuer: "https://a.example"}], policy: {rules: [{id: r, tools: ["*"], resources: ["file:///*"], confirm: true}]}}`,
			`auth.policy.rules[0].confirm: rule "r": applies to tool calls only`},
		{"confirm on every kind", `{issuers: [{issuer: "https://a.example"}], policy: {rules: [{id: all, upstream: gh, confirm: true}]}}`,
			`auth.policy.rules[0].confirm: rule "all": applies to tool calls only`},
		{"confirm on tools", `{issuers: [{issuer: "https://a.example"}], policy: {rules: [{id: t, tools: ["*"], confirm: true}]}}`, ""},
		{"two issuers, unbound allow", `{issuers: [{issuer: "https://a.example"}, {issuer: "https://b.example"}], policy: {rules: [{id: u, tools: ["*"]}]}}`,
			`auth.policy.rules[0].issuers: rule "u": required: with 2 issuers configured, an allow rule must say whose tokens it trusts`},
		{"two issuers, unknown issuer", `{issuers: [{issuer: "https://a.example"}, {issuer: "https://b.example"}], policy: {rules: [{id: u, tools: ["*"], issuers: ["https://a.example/"]}]}}`,
			`auth.policy.rules[0].issuers[0]: rule "u": "https://a.example/" is not one of auth.issuers`},
		{"two issuers, bound", `{issuers: [{issuer: "https://a.example"}, {issuer: "https://b.example"}], policy: {rules: [{id: a, tools: ["*"], issuers: ["https://a.example"]}, {id: any, prompts: ["*"], issuers: ["*"]}, {id: d, effect: deny, tools: ["rm"]}]}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(file, []byte(base+"auth: "+tt.auth+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadConfig("check-config", []string{"--config", file}, func(string) string { return "" }, io.Discard)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
