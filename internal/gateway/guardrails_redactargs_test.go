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

// TestGuardrailsRedactedArgumentsHeldToSchema: arguments the gateway redacted are held to the
// tool's inputSchema before they are forwarded, whatever the rule's validate.arguments says
// (nothing, or log): a card sent as a number and redacted to the marker string is no longer
// the integer the schema declares, and the call is refused naming the place, never forwarded.
// A redaction that still fits (a string) is forwarded redacted.
func TestGuardrailsRedactedArgumentsHeldToSchema(t *testing.T) {
	echo := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	}
	be := mcptest.StartServer(t, "be", mcptest.WithTool(&mcp.Tool{Name: "count", InputSchema: &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}, "note": {Type: "string"}}}}, echo))
	for _, validate := range []string{"", "log"} {
		gw := startTestGateway(t, func(c *Config) {
			c.Legacy.Enabled = true
			c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "pii", Tools: []string{"*"},
				Validate: guardrails.ValidateConfig{Arguments: validate}, Arguments: guardrails.DirectionConfig{PII: "redact"}}}}
		}, be)
		for _, version := range []string{"2026-07-28", "2025-11-25"} {
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version))
			be.Reset()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__count", Arguments: map[string]any{"n": railCard}})
			if got := mcptest.ResultText(res); err != nil || !res.IsError || !strings.Contains(got, `Refused by guardrail rule "pii"`) ||
				!strings.Contains(got, "/n") || strings.Contains(got, "4111") || len(be.RequestsOf("tools/call")) != 0 {
				t.Errorf("validate %q, %s: a redacted number: %v %q, %d calls forwarded", validate, version, err, got, len(be.RequestsOf("tools/call")))
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__count", Arguments: map[string]any{"note": railEmail}})
			if got := mcptest.ResultText(res); err != nil || res.IsError || got != `{"note":"[REDACTED:email]"}` {
				t.Errorf("validate %q, %s: a redacted string: %v %q", validate, version, err, got)
			}
		}
	}
}
