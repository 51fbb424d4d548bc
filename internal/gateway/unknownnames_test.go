package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestUnknownNamesNamedAlike: a tools/call or prompts/get of a name that does not exist, names no
// configured backend, or that the policy hides from the caller is answered with -32602 naming
// the name as the caller sent it (quoted, control characters escaped, cut to 128 bytes), with a
// hint of how names are made when it has no separator; and a hidden name is answered byte for
// byte as a missing one (the answers differ in the name only), to a 2026-07-28 client and to a
// pre-2026 one, so the answer tells a caller nothing of names it may not see.
func TestUnknownNamesNamedAlike(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	iss := newIssuer(t)
	gw := legacyGateway(t, iss, func(c *Config) {
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "echo", Upstream: "alpha", Tools: []string{mcptest.ToolEcho}, AnyScope: []string{"tools:use"}}}
		c.HealthInterval = 0
	}, alpha)
	tok := mintFor(t, iss, "bob")
	raw := &legacyclient.Raw{Token: tok}
	sid := raw.Initialize(t, gw.url())
	body := func(method, name string, meta bool) string {
		n, err := json.Marshal(name)
		if err != nil {
			t.Fatal(err)
		}
		m := ""
		if meta {
			m = testMeta + ","
		}
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + m + `"name":` + string(n) + `,"arguments":{}}}`
	}
	// answer is the body the 2026-07-28 and the pre-2026 client get for name.
	answer := func(method, name string) (modern, legacy string) {
		t.Helper()
		h := modernHeaders(method, name)
		h.Set("Authorization", "Bearer "+tok)
		status, _, b := post(t, gw.url(), h, body(method, name, true))
		if status != http.StatusBadRequest {
			t.Errorf("%s %q: %d %s, want 400", method, name, status, b)
		}
		r := raw.Post(t, gw.url(), sid, body(method, name, false))
		if r.Status != http.StatusOK {
			t.Errorf("%s %q, pre-2026: %s, want 200", method, name, r)
		}
		return b, strings.TrimSpace(r.Body)
	}
	const hint = `: tools are named \u003cbackend\u003e__\u003ctool\u003e`
	for _, tt := range []struct{ method, hidden, missing, want string }{
		{"tools/call", "alpha__" + mcptest.ToolWhoAmI, "alpha__nope", `{"code":-32602,"message":"Invalid params: unknown tool \"alpha__` + mcptest.ToolWhoAmI + `\""}`},
		{"tools/call", "alpha__" + mcptest.ToolWhoAmI, "zzzzz__" + mcptest.ToolWhoAmI, ""},
		{"prompts/get", "alpha__" + mcptest.PromptGreet, "alpha__nope", `{"code":-32602,"message":"Invalid params: unknown prompt \"alpha__` + mcptest.PromptGreet + `\""}`},
	} {
		hm, hl := answer(tt.method, tt.hidden)
		mm, ml := answer(tt.method, tt.missing)
		if tt.want != "" && !strings.Contains(hm, tt.want) {
			t.Errorf("%s %s: %s, want %s", tt.method, tt.hidden, hm, tt.want)
		}
		for _, pair := range [][2]string{{hm, mm}, {hl, ml}} {
			if strings.ReplaceAll(pair[1], tt.missing, tt.hidden) != pair[0] || strings.Contains(pair[0], "alpha__nope") {
				t.Errorf("%s: hidden %s\nmissing %s\nwant the same bytes but for the name", tt.method, pair[0], pair[1])
			}
		}
		if !strings.Contains(hl, tt.hidden) {
			t.Errorf("pre-2026: %s does not name %s", hl, tt.hidden)
		}
	}
	for _, tt := range []struct{ name, want string }{
		{mcptest.ToolWhoAmI, `"Invalid params: unknown tool \"` + mcptest.ToolWhoAmI + `\"` + hint + `"`},
		{mcptest.ToolEcho, `"Invalid params: unknown tool \"` + mcptest.ToolEcho + `\"` + hint + `"`}, // a tool the caller may use, named without its backend
		{"a\u0007b\u202e", `"Invalid params: unknown tool \"a\\ab\\u202e\"` + hint + `"`},
		{"alpha__" + strings.Repeat("x", 200), `"Invalid params: unknown tool \"alpha__` + strings.Repeat("x", 121) + `\"..."`},
		{strings.Repeat("é", 100), `"Invalid params: unknown tool \"` + strings.Repeat("é", 64) + `\"...` + hint + `"`},
	} {
		r := raw.Post(t, gw.url(), sid, body("tools/call", tt.name, false))
		if !strings.Contains(r.Body, `"message":`+tt.want) {
			t.Errorf("%q: %s, want the message %s", tt.name, r, tt.want)
		}
	}
	if r := raw.Post(t, gw.url(), sid, body("prompts/get", mcptest.PromptGreet, false)); !strings.Contains(r.Body,
		`"message":"Invalid params: unknown prompt \"`+mcptest.PromptGreet+`\": prompts are named \u003cbackend\u003e__\u003cprompt\u003e"`) {
		t.Errorf("a prompt named without its backend: %s", r)
	}
	for _, ex := range alpha.Requests() {
		if m := ex.Header.Get("Mcp-Method"); m == "tools/call" || m == "prompts/get" {
			t.Errorf("the backend was sent %s", m)
		}
	}
}
