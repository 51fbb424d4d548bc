package pre2026

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// logLines are the JSON lines of logs whose msg is msg.
func logLines(t *testing.T, logs *mcptest.LogBuffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// waitLogLines waits until logs hold at least n lines whose msg is msg and that match holds
// for, and returns those lines: the access line of a request is written as its handler
// returns, which may be after the client has read its answer.
func waitLogLines(t *testing.T, logs *mcptest.LogBuffer, msg string, n int, match func(map[string]any) bool) []map[string]any {
	t.Helper()
	var out []map[string]any
	mcptest.WaitFor(t, fmt.Sprintf("%d %q log lines", n, msg), func() bool {
		out = out[:0]
		for _, l := range logLines(t, logs, msg) {
			if match(l) {
				out = append(out, l)
			}
		}
		return len(out) >= n
	})
	return out
}

// TestLegacyNotAskedLogged: when the gateway fails to ask a pre-2026 client for what its call
// needs for a reason of its own (here its answer ids cannot be sealed), the client is told so
// in its terms and the operator finds the error in a warning naming the call's request id,
// whether the call is a 2026-07-28 backend's round (the call ends with isError) or a 2025
// backend's own request on its call's stream (the backend gets an error, and ends the call as it
// sees fit). Before, the relay's failure was logged nowhere.
func TestLegacyNotAskedLogged(t *testing.T) {
	elicit := &mcp.Tool{Name: "elicit", InputSchema: &jsonschema.Schema{Type: "object"}}
	old := mcptest.StartLegacyServer(t, "old", mcptest.WithoutDefaults(),
		mcptest.WithTool(elicit, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Name?", RequestedSchema: &jsonschema.Schema{Type: "object"}})
			text := "answered"
			if err != nil {
				text = "refused: " + err.Error()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}))
	be := mcptest.StartServer(t, "be")
	var logs mcptest.LogBuffer
	gw, e := startLegacyGateway(t, gwSpec{Deps: mcphttp.Deps{MRTR: testMRTRCodec(t), Logger: slog.New(slog.NewJSONHandler(&logs, nil))}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()}, upstreams.UpstreamConfig{Name: "old", URL: old.URL()})
	// A sealer whose tokens may not exceed 8 bytes: no answer id can be minted.
	e.asks.sealer = testKeyRing(t).SealerUpTo(purposeAnswerID, 8)
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(mcptest.Accept(map[string]any{"name": "Ada"})))
	for _, tt := range []struct{ tool, want string }{
		{"be__ask_name", "The call to be__ask_name failed: the gateway could not ask the client for the input this call needs"},
		{"old__elicit", "the client could not be asked"},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool, Arguments: map[string]any{}})
		if err != nil || !strings.Contains(mcptest.ResultText(res), tt.want) {
			t.Errorf("%s: %v %q, want %q", tt.tool, err, mcptest.ResultText(res), tt.want)
			continue
		}
		var call map[string]any
		for _, l := range waitLogLines(t, &logs, "request", 1, func(l map[string]any) bool { return l["name"] == tt.tool }) {
			call = l
		}
		var warned bool
		for _, l := range logLines(t, &logs, "legacy client could not be asked") {
			if call != nil && l["request_id"] == call["request_id"] {
				warned = l["level"] == "WARN" && strings.Contains(l["error"].(string), "sealing an answer id")
			}
		}
		if !warned {
			t.Errorf("%s: no warning with the call's request id and the error:\n%s", tt.tool, logs.String())
		}
	}
	e.asks.mu.Lock()
	waiting := len(e.asks.waiters) + len(e.asks.perCaller)
	e.asks.mu.Unlock()
	if waiting != 0 {
		t.Errorf("%d requests or callers left waiting", waiting)
	}
}
