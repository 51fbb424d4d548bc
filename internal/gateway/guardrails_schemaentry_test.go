package gateway

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsSchemaOfTheToolCalled: the compiled schema found with a tool's entry is always
// that tool's, as its backend lists it now: two tools that share a schema, a schema the
// engine's cache (one place here) let go, and a tool whose schema its backend changed (a
// list_changed) are each validated against the schema of the tool called, on both edges.
func TestGuardrailsSchemaOfTheToolCalled(t *testing.T) {
	limited := func(name string, max float64) *mcp.Tool {
		return &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": max}}}}
	}
	be := mcptest.StartServer(t, "be", mcptest.WithoutDefaults(), mcptest.WithTool(limited("a", 10), noopTool),
		mcptest.WithTool(limited("b", 10), noopTool), mcptest.WithTool(limited("c", 1000), noopTool))
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Guardrails = guardrails.Config{SchemaCache: 1, Rules: []guardrails.RuleConfig{{ID: "n", Tools: []string{"*"},
			Validate: guardrails.ValidateConfig{Arguments: "block"}}}}
	}, be)
	ctx := context.Background()
	sessions := map[string]*mcp.ClientSession{}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		sessions[version] = mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version))
	}
	expect := func(what, tool string, n int, refused bool) {
		t.Helper()
		for version, cs := range sessions {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__" + tool, Arguments: map[string]any{"n": n}})
			if err != nil || res.IsError != refused || (refused && !strings.Contains(mcptest.ResultText(res), "/n")) {
				t.Errorf("%s, %s: %s n=%d: %v %+v", what, version, tool, n, err, res)
			}
		}
	}
	for _, tool := range []string{"a", "b", "a"} {
		expect("a schema two tools share", tool, 5, false)
		expect("a schema two tools share", tool, 500, true)
	}
	expect("another schema", "c", 500, false)
	runtime.GC()
	runtime.GC()
	expect("a schema the cache let go", "a", 500, true)
	expect("a schema the cache let go", "b", 11, true)
	expect("a schema the cache let go", "c", 1001, true)
	// a's schema widens, c's narrows; b keeps its own.
	be.MCP().AddTool(limited("a", 1000), noopTool)
	be.MCP().AddTool(limited("c", 10), noopTool)
	for _, cs := range sessions {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	expect("a schema widened", "a", 500, false)
	expect("a schema left alone", "b", 500, true)
	expect("a schema narrowed", "c", 500, true)
}
