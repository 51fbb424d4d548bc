package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsLinkHostReadOn: a link whose allowed host a browser reads on past where prose
// ends it (an ideographic full stop, which IDNA maps to '.', a comma, a character that is not
// ASCII, a closing parenthesis before an '@') names a host under attacker.test, and so does
// one whose user information holds an HTML reference to '/' that a Markdown renderer decodes
// (&sol;): each is a link finding, redacted whole where the rule redacts, in a tools/call
// result and in prompts/get messages, in both eras, so the client reads no copy of that host.
// A link to the allowed host that a sentence's punctuation follows is relayed as it is.
// Before, the host was taken to end at the stop (or read raw), found allowed, and the link
// relayed.
func TestGuardrailsLinkHostReadOn(t *testing.T) {
	links := []string{
		"https://docs.example.com\u3002attacker.test/x",
		"https://docs.example.com\uff0eattacker.test/x",
		"https://docs.example.com,.attacker.test/x",
		"https://docs.example.com\u00e9.attacker.test/x",
		"https://docs.example.com)@attacker.test/x",
		"https://attacker.test&sol;@docs.example.com/x",
	}
	text := "see " + strings.Join(links, " and ") + "; or (https://docs.example.com/ok), https://docs.example.com\u3002"
	be := mcptest.StartServer(t, "be",
		mcptest.WithTool(&mcp.Tool{Name: "links", InputSchema: &jsonschema.Schema{Type: "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
			}),
		mcptest.WithPrompt(&mcp.Prompt{Name: "links"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		}))
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Guardrails = guardrails.Config{AllowedHosts: []string{"*.example.com"}, Rules: []guardrails.RuleConfig{{ID: "links",
			Tools: []string{"*"}, Prompts: []string{"*"}, Results: guardrails.DirectionConfig{Injection: "redact"}}}}
	}, be)
	want := "see " + strings.TrimSuffix(strings.Repeat("[REDACTED:link] and ", len(links)), " and ") +
		"; or (https://docs.example.com/ok), https://docs.example.com\u3002"
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version))
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__links"})
		if got := mcptest.ResultText(res); err != nil || got != want {
			t.Errorf("%s, tools/call: %v\n got %q\nwant %q", version, err, got, want)
		}
		pr, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "be__links"})
		if err != nil || len(pr.Messages) != 1 {
			t.Fatalf("%s, prompts/get: %v", version, err)
		}
		if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != want {
			t.Errorf("%s, prompts/get: %#v", version, pr.Messages[0].Content)
		}
	}
}

// TestGuardrailsLinkHostAsABrowser: a link's host is judged against the allowlist as a browser
// reads it (new URL, in chromium: internal/weburl's TestParseAgreesWithABrowser): a host
// written in another case, percent-encoded, in fullwidth letters, as Unicode whose ASCII form
// is allowed, or as an IPv4 address in another form goes to an allowed host and is relayed as
// it is, and a line break before an '@', which a browser removes, makes the host the one after
// it. In a tools/call result, in both eras. Before, the first were link findings (redacted) and
// the last was relayed.
func TestGuardrailsLinkHostAsABrowser(t *testing.T) {
	allowed := []string{"https://DOCS.ex%61mple.com/a", "https://\uff24\uff2f\uff23\uff33.example.com/b", "http://0x7f.1/c",
		"http://2130706433/d", "https://bücher.example/e", "https://docs.example.com\u3002/f"}
	elsewhere := []string{"https://docs.example.com\n@attacker.test/x", "https://docs.example.com\t@attacker.test/y"}
	text := "see " + strings.Join(allowed, " and ") + " but " + strings.Join(elsewhere, " or ") + " ok"
	be := mcptest.StartServer(t, "be",
		mcptest.WithTool(&mcp.Tool{Name: "links", InputSchema: &jsonschema.Schema{Type: "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
			}))
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Guardrails = guardrails.Config{AllowedHosts: []string{"*.example.com", "127.0.0.1", "bücher.example"},
			Rules: []guardrails.RuleConfig{{ID: "links", Tools: []string{"*"},
				Results: guardrails.DirectionConfig{Detectors: map[string]string{"link": "redact"}}}}}
	}, be)
	want := "see " + strings.Join(allowed, " and ") + " but [REDACTED:link] or [REDACTED:link] ok"
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version))
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__links"})
		if got := mcptest.ResultText(res); err != nil || got != want {
			t.Errorf("%s, tools/call: %v\n got %q\nwant %q", version, err, got, want)
		}
	}
}
