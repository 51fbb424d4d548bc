package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// askOnce is a backend tool that asks for input (its own MRTR round) before it runs.
func askOnce(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params.RequestState == "round-1" {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran"}}}, nil
	}
	return &mcp.CallToolResult{RequestState: "round-1", InputRequests: mcp.InputRequestMap{
		"which": &mcp.ElicitParams{Mode: "form", Message: "Which file?"}}}, nil
}

// TestPinDriftDuringBackendRound: a backend asks for input (its own round), then changes the
// tool in a way its pins confirm (icons-changed) before the client answers. The answered round
// is not forwarded on the state the round began with: the retry asks the user to confirm the
// change, as a first call of the changed tool would, and the backend runs nothing until then.
// The confirmation a call needs is judged again when a round comes back, not only when the call
// began.
func TestPinDriftDuringBackendRound(t *testing.T) {
	files := mcptest.StartServer(t, "files", mcptest.WithoutDefaults(),
		mcptest.WithTool(tool("ask", "Ask, then touch a file.", nil, nil), askOnce))
	p := startPinned(t, &pins.Config{LockFile: pinLock(t, files)}, nil, files)
	_, first := rawCall(t, p.gw, "", "files__ask", `{"path":"a"}`, "")
	if first.Result.ResultType != "input_required" || first.Result.RequestState == "" {
		t.Fatalf("first call: %+v %+v", first.Result, first.Error)
	}
	changed := tool("ask", "Ask, then touch a file.", nil, nil)
	changed.Icons = []mcp.Icon{{Source: "https://example.com/other.png"}}
	files.MCP().AddTool(changed, askOnce)
	_ = listNames(t, p.gw, "tools/list") // the client lists again, as on the backend's list_changed
	files.Reset()
	_, retry := rawCall(t, p.gw, "", "files__ask", `{"path":"a"}`,
		`,"requestState":"`+first.Result.RequestState+`","inputResponses":{"which":{"action":"accept","content":{}}}`)
	if retry.Result.ResultType != "input_required" || !strings.Contains(string(retry.Result.InputRequests), "icons-changed") ||
		toolCalls(files) != 0 {
		t.Errorf("retry after the change: %+v %+v, backend calls %d; want a confirmation naming icons-changed",
			retry.Result, retry.Error, toolCalls(files))
	}
}
