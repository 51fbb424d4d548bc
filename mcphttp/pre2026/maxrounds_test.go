package pre2026

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// destructiveAsking is a destructive tool that, once confirmed, asks its caller a name in a
// round of its own (backend rounds after the gateway's): two rounds of client input.
func destructiveAsking(runs *atomic.Int32) mcptest.Option {
	yes := true
	tool := &mcp.Tool{Name: "pay", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}}
	return mcptest.WithTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["payee"].(*mcp.ElicitResult); ok && req.Params.RequestState == "asked" && r.Action == "accept" {
			runs.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "paid"}}}, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"payee": &mcp.ElicitParams{Mode: "form", Message: "Pay whom?",
			RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}}},
			RequestState: "asked"}, nil
	})
}

// TestLegacyMaxRoundsCountsClientInput: legacy.maxRounds bounds the rounds of input the client
// is asked for in one call, the gateway's confirmation and a backend's rounds alike, as it bounds
// a pre-2026 backend's requests relayed to the client: with 1, a confirmed call and a backend's
// single question are answered; a call that needs a confirmation and then a backend's question
// ends with an error that says so after the client was asked once, and runs nothing; with 2 it
// is answered.
func TestLegacyMaxRoundsCountsClientInput(t *testing.T) {
	var runs atomic.Int32
	be := mcptest.StartServer(t, "be", destructiveTool(&runs), destructiveAsking(&runs))
	connect := func(maxRounds int) (*mcp.ClientSession, *atomic.Int32) {
		gw, _ := startAskingGateway(t, gwSpec{Server: mcphttp.Config{ConfirmDestructiveTools: true}, Edge: Config{MaxRounds: maxRounds}},
			upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
		var asked atomic.Int32
		return mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
			mcptest.WithElicitation(func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				if strings.Contains(req.Params.Message, "Pay whom?") || strings.Contains(req.Params.Message, "your name") {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			})), &asked
	}
	one, asked := connect(1)
	for _, tt := range []struct{ tool, want string }{{"be__wipe", "wiped"}, {"be__ask_name", "Hello, Ada"}} {
		asked.Store(0)
		res, err := one.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool, Arguments: map[string]any{}})
		if err != nil || res.IsError || mcptest.ResultText(res) != tt.want || asked.Load() != 1 {
			t.Errorf("%s with maxRounds 1: %v %+v, asked %d; want %q after one round", tt.tool, err, res, asked.Load(), tt.want)
		}
	}
	runs.Store(0)
	asked.Store(0)
	res, err := one.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__pay", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "needed more than 1 round of client input") ||
		asked.Load() != 1 || runs.Load() != 0 {
		t.Errorf("two rounds with maxRounds 1: %v %+v, asked %d, runs %d", err, res, asked.Load(), runs.Load())
	}
	two, asked := connect(2)
	res, err = two.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__pay", Arguments: map[string]any{}})
	if err != nil || res.IsError || mcptest.ResultText(res) != "paid" || asked.Load() != 2 || runs.Load() != 1 {
		t.Errorf("two rounds with maxRounds 2: %v %+v, asked %d, runs %d", err, res, asked.Load(), runs.Load())
	}
}
