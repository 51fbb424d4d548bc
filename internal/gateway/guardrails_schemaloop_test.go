package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsSchemaReferenceLoops: a backend's tool schema that applies itself to one value
// through references (a $def that is only a $ref to itself) or applies one subschema to a
// value through 2^40 paths (allOf of two references, forty deep) fails the check: the call is
// refused, never forwarded, and a result checked against such an outputSchema is withheld,
// in both eras. Arguments nested forty deep under a schema that applies itself to their parts
// through two paths a level are refused as too costly to check, shallow ones forwarded.
// Before, the validator followed the loop until the stack was exhausted, which ended the
// gateway's process (every call on the replica lost), and the fan-outs held a core for longer
// than any timeout.
func TestGuardrailsSchemaReferenceLoops(t *testing.T) {
	loop := json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/a"}}}`)
	var fan strings.Builder
	fan.WriteString(`{"type":"object","$ref":"#/$defs/d0","$defs":{`)
	for i := range 40 {
		fmt.Fprintf(&fan, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fan.WriteString(`"d40":{"type":"object"}}}`)
	open := json.RawMessage(`{"type":"object"}`)
	twice := json.RawMessage(`{"type":"object","allOf":[{"$ref":"#/$defs/n"},{"$ref":"#/$defs/n"}],"$defs":{"n":{"properties":{"x":{"$ref":"#"}}}}}`)
	nest := func(depth int) map[string]any {
		v := map[string]any{}
		for range depth {
			v = map[string]any{"x": v}
		}
		return v
	}
	done := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}, StructuredContent: map[string]any{"x": 1}}, nil
	}
	be := mcptest.StartServer(t, "be",
		mcptest.WithTool(&mcp.Tool{Name: "loop", InputSchema: loop}, done),
		mcptest.WithTool(&mcp.Tool{Name: "fan", InputSchema: json.RawMessage(fan.String())}, done),
		mcptest.WithTool(&mcp.Tool{Name: "loopout", InputSchema: open, OutputSchema: loop}, done),
		mcptest.WithTool(&mcp.Tool{Name: "twice", InputSchema: twice}, done))
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "schema", Tools: []string{"*"},
			Validate: guardrails.ValidateConfig{Arguments: "block", StructuredContent: "block"}}}}
	}, be)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version))
		for _, tool := range []string{"loop", "fan"} {
			be.Reset()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__" + tool, Arguments: map[string]any{"x": 1}})
			if got := mcptest.ResultText(res); err != nil || !res.IsError || !strings.Contains(got, "input schema cannot be used") ||
				len(be.RequestsOf("tools/call")) != 0 {
				t.Errorf("%s, %s: %v %q, %d calls forwarded", version, tool, err, got, len(be.RequestsOf("tools/call")))
			}
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__loopout", Arguments: map[string]any{}})
		if got := mcptest.ResultText(res); err != nil || !res.IsError || !strings.Contains(got, "output schema cannot be used") || res.StructuredContent != nil {
			t.Errorf("%s, loopout: %v %q %v", version, err, got, res.StructuredContent)
		}
		be.Reset()
		res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__twice", Arguments: nest(40)})
		if got := mcptest.ResultText(res); err != nil || !res.IsError || !strings.Contains(got, "more checks against the tool's schema") ||
			len(be.RequestsOf("tools/call")) != 0 {
			t.Errorf("%s, twice 40 deep: %v %q, %d calls forwarded", version, err, got, len(be.RequestsOf("tools/call")))
		}
		res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__twice", Arguments: nest(3)})
		if got := mcptest.ResultText(res); err != nil || res.IsError || len(be.RequestsOf("tools/call")) != 1 {
			t.Errorf("%s, twice 3 deep: %v %q, %d calls forwarded", version, err, got, len(be.RequestsOf("tools/call")))
		}
	}
}
