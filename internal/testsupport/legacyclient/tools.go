package legacyclient

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// ToolDeploy is the tool that needs the user's confirmation: behind the gateway a policy asks
// for it ([DeployTool]); a server serving legacy clients itself asks in the same shape
// ([ConfirmingDeployTool]).
const ToolDeploy = "deploy"

// ConfirmKey is the inputRequests key [ConfirmingDeployTool] asks under.
const ConfirmKey = "confirm"

// deployIn is the arguments of the deploy tool.
type deployIn struct {
	Text string `json:"text"`
}

// DeployTool is a plain deploy{text} tool for a backend behind the gateway, whose policy asks
// for the confirmation: each call runs, is counted in count, and returns text.
func DeployTool(count *atomic.Int64) mcptest.Option {
	return mcptest.WithTool(&mcp.Tool{Name: ToolDeploy, Description: "Deploys text.", InputSchema: deploySchema()},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in deployIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, fmt.Errorf("deploy arguments: %w", err)
			}
			count.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
		})
}

// ConfirmingDeployTool is deploy{text} asking itself for the confirmation the gateway asks for
// (a form with one boolean "approve") through MRTR, which the go-sdk's stateful server turns into
// a real elicitation/create request to a legacy client. It runs, counted in count, only once
// approved; otherwise it returns isError.
func ConfirmingDeployTool(count *atomic.Int64) mcptest.Option {
	return mcptest.WithTool(&mcp.Tool{Name: ToolDeploy, Description: "Deploys text once approved.", InputSchema: deploySchema()},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in deployIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, fmt.Errorf("deploy arguments: %w", err)
			}
			if r, ok := req.Params.InputResponses[ConfirmKey].(*mcp.ElicitResult); ok {
				if approved, _ := r.Content["approve"].(bool); r.Action != "accept" || !approved {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the user did not approve"}}}, nil
				}
				count.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil
			}
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{ConfirmKey: &mcp.ElicitParams{
					Mode:    "form",
					Message: "Allow the call to " + ToolDeploy + "?",
					RequestedSchema: &jsonschema.Schema{
						Type:       "object",
						Properties: map[string]*jsonschema.Schema{"approve": {Type: "boolean"}},
						Required:   []string{"approve"},
					},
				}},
				RequestState: "deploy/v1",
			}, nil
		})
}

func deploySchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{"text": {Type: "string"}},
		Required:   []string{"text"},
	}
}
