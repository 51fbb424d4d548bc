package pre2026

import (
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLegacyClientOnToolset: a pre-2026 client connected to a tool set's path sees and calls
// what the set selects, as a 2026-07-28 client does there, and nothing else; in search mode it
// gets the meta-tools and runs a selected tool through call_tool.
func TestLegacyClientOnToolset(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	cfg := gwSpec{Server: mcphttp.Config{Toolsets: []mcphttp.ToolsetConfig{
		{Name: "ro", Include: []mcphttp.SelectorConfig{{Upstream: "be", Tools: []string{"echo"}}}},
		{Name: "find", Include: []mcphttp.SelectorConfig{{Upstream: "be", Tools: []string{"echo", "add"}}},
			Search: mcphttp.SearchConfig{Enabled: true}},
	}}}
	gw, _ := startLegacyGateway(t, cfg, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	for _, v := range legacyVersions {
		t.Run(v+"/set", func(t *testing.T) {
			cs := mcptest.Connect(t, gw.URL+"/ro", mcptest.WithProtocolVersion(v))
			ctx := t.Context()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			if !slices.Equal(names, []string{"be__echo"}) {
				t.Fatalf("tools/list on the set: %v, want [be__echo]", names)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError || mcptest.ResultText(res) != "hi" {
				t.Fatalf("a selected tool: %v %+v", err, res)
			}
			be.Reset()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__add", Arguments: map[string]any{"a": 1, "b": 2}}); err == nil {
				t.Fatal("a tool outside the set was called")
			}
			if n := len(be.RequestsOf("tools/call")); n != 0 {
				t.Fatalf("the backend got %d calls for a tool outside the set", n)
			}
		})
		t.Run(v+"/search", func(t *testing.T) {
			cs := mcptest.Connect(t, gw.URL+"/find", mcptest.WithProtocolVersion(v))
			ctx := t.Context()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			if !slices.Contains(names, "find_tools") || slices.Contains(names, "be__add") {
				t.Fatalf("search-mode tools/list: %v", names)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool",
				Arguments: map[string]any{"name": "be__add", "arguments": map[string]any{"a": 2, "b": 3}}})
			want := "5"
			if v == "2025-03-26" {
				want = `5{"sum":5}` // structured output carried as text
			}
			if err != nil || res.IsError || mcptest.ResultText(res) != want {
				t.Fatalf("call_tool: %v %+v", err, res)
			}
		})
	}
}
