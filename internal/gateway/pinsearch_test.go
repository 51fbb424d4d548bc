package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestPinCallToolThroughSearch: in search mode a tool whose pin blocks it is neither found by
// find_tools nor run by call_tool: call_tool is the direct call of the inner tool, so pinning
// refuses it exactly as it refuses files__t called by name, and the backend gets nothing.
func TestPinCallToolThroughSearch(t *testing.T) {
	files := mcptest.StartServer(t, "files", mcptest.WithoutDefaults(),
		mcptest.WithTool(tool("t", "Touch a file.", nil, nil), noopTool))
	p := startPinned(t, &pins.Config{LockFile: pinLock(t, files)},
		func(c *Config) { c.Server.Search = mcphttp.SearchConfig{Enabled: true} }, files)
	if status, res := rawCall(t, p.gw, "", "call_tool", `{"name":"files__t","arguments":{}}`, ""); status != http.StatusOK || res.Error != nil || toolCalls(files) != 1 {
		t.Fatalf("call_tool of the pinned tool: %d %+v, backend calls %d", status, res.Error, toolCalls(files))
	}
	// Widened: a new argument the operator never approved.
	files.MCP().AddTool(tool("t", "Touch a file.", map[string]any{"cmd": map[string]any{"type": "string"}}, nil), noopTool)
	_ = listNames(t, p.gw, "tools/list") // the gateway refetches and judges the new definition
	files.Reset()
	status, res := rawCall(t, p.gw, "", "call_tool", `{"name":"files__t","arguments":{"cmd":"rm -rf /"}}`, "")
	if status != http.StatusForbidden || res.Error == nil || !strings.Contains(res.Error.Message, "pin") || toolCalls(files) != 0 {
		t.Errorf("call_tool of the widened tool: %d %+v, backend calls %d; want refused for pin drift", status, res.Error, toolCalls(files))
	}
	_, found := rawCall(t, p.gw, "", "find_tools", `{"query":"touch a file"}`, "")
	if found.Error != nil || len(found.Result.Content) == 0 || strings.Contains(found.Result.Content[0].Text, "files__t") {
		t.Errorf("find_tools after the change: %+v; want an answer without the blocked tool", found)
	}
}
