package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsRedactedStructuredContent: the gateway never makes a result the protocol
// refuses. Where a rule redacts and does not validate, a structuredContent whose redaction
// still fits the tool's outputSchema (a string) is relayed redacted, consistently with the
// text content; one whose redaction would not (a card number, declared an integer, replaced
// with the marker string) is withheld with a refusal naming the place, never the value, rather
// than relayed for a client that validates it (the TypeScript SDK's does) to fail the call.
// Before, the client got {"card":"[REDACTED:payment-card]"} against {"card":{"type":"integer"}},
// and still did where the rule's validate.structuredContent was log.
func TestGuardrailsRedactedStructuredContent(t *testing.T) {
	const card = 4111111111111111
	out := func(prop string, typ string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{prop: {Type: typ}}, Required: []string{prop}}
	}
	result := func(sc map[string]any) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text, _ := json.Marshal(sc)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: sc}, nil
		}
	}
	be := mcptest.StartServer(t, "be",
		mcptest.WithTool(&mcp.Tool{Name: "card", InputSchema: &jsonschema.Schema{Type: "object"}, OutputSchema: out("card", "integer")},
			result(map[string]any{"card": card})),
		mcptest.WithTool(&mcp.Tool{Name: "owner", InputSchema: &jsonschema.Schema{Type: "object"}, OutputSchema: out("owner", "string")},
			result(map[string]any{"owner": railEmail})))
	// The rule validates nothing, or only logs what fails the schema: either way a
	// structuredContent the gateway redacted is held to the schema.
	for _, validate := range []string{"", "log"} {
		redactedStructured(t, be, validate)
	}
}

// redactedStructured is TestGuardrailsRedactedStructuredContent under a rule whose
// validate.structuredContent is validate.
func redactedStructured(t *testing.T, be *mcptest.Server, validate string) {
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "pii", Tools: []string{"*"},
			Validate: guardrails.ValidateConfig{StructuredContent: validate},
			Results:  guardrails.DirectionConfig{PII: "redact"}}}}
	}, be)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version+"/validate="+validate, func(t *testing.T) {
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__owner"})
			if err != nil || res.IsError {
				t.Fatalf("owner: %v %+v", err, res)
			}
			sc, _ := json.Marshal(res.StructuredContent)
			if want := `{"owner":"[REDACTED:pii-email]"}`; string(sc) != strings.Replace(want, "pii-", "", 1) ||
				mcptest.ResultText(res) != string(sc) {
				t.Errorf("owner: structured %s, text %q", sc, mcptest.ResultText(res))
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__card"})
			if err != nil {
				t.Fatalf("card: %v", err)
			}
			got := mcptest.ResultText(res)
			if !res.IsError || res.StructuredContent != nil || !strings.Contains(got, `Refused by guardrail rule "pii"`) ||
				!strings.Contains(got, "/structuredContent/card") || strings.Contains(got, "4111") {
				sc, _ := json.Marshal(res.StructuredContent)
				t.Errorf("card: error %v, structured %s, text %q", res.IsError, sc, got)
			}
		})
	}
	stop()
	for _, v := range []string{"4111111111111111", railEmail} {
		if strings.Contains(logs.String(), v) {
			t.Errorf("a log line holds %q", v)
		}
	}
	checkRailAuditLines(t, logs.String())
}
