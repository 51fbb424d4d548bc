package legacyclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

// ToolAskRounds asks for a name as many times as its rounds argument says, one MRTR round each.
const ToolAskRounds = "ask_rounds"

// askRoundsIn is the arguments of the ask_rounds tool.
type askRoundsIn struct {
	Rounds int `json:"rounds"`
}

// askRoundsKey is the inputRequests key each of ask_rounds' rounds asks under.
const askRoundsKey = "name"

// AskRoundsTool is ask_rounds{rounds}: it asks for a name through MRTR rounds times, one round
// after the other, carrying the names it has in its requestState, then answers "names: " and
// them joined with commas. A declined round ends it with isError. The go-sdk's stateful server
// turns each round into a real elicitation/create request to a legacy client; behind the gateway
// each round is an input_required result the edge turns into one.
func AskRoundsTool() mcptest.Option {
	return mcptest.WithTool(&mcp.Tool{Name: ToolAskRounds, Description: "Asks for a name as many times as it is told.",
		InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"rounds": {Type: "integer"}},
			Required: []string{"rounds"}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in askRoundsIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Rounds < 1 || in.Rounds > 10 {
				return nil, fmt.Errorf("ask_rounds arguments: want rounds 1..10")
			}
			var names []string
			if st, ok := strings.CutPrefix(req.Params.RequestState, "rounds/"); ok && st != "" {
				names = strings.Split(st, ",")
			}
			if r, ok := req.Params.InputResponses[askRoundsKey].(*mcp.ElicitResult); ok {
				if r.Action != "accept" {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "ask_rounds: " + r.Action}}}, nil
				}
				name, _ := r.Content["name"].(string)
				names = append(names, name)
			}
			if len(names) >= in.Rounds {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "names: " + strings.Join(names, ",")}}}, nil
			}
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{askRoundsKey: &mcp.ElicitParams{
					Mode:    "form",
					Message: fmt.Sprintf("Name number %d?", len(names)+1),
					RequestedSchema: &jsonschema.Schema{Type: "object",
						Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}, Required: []string{"name"}},
				}},
				RequestState: "rounds/" + strings.Join(names, ","),
			}, nil
		})
}
