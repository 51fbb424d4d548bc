package pre2026

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLegacyReshapedResultCounted: the copy of a result reshaped for a 2025 client is held
// beside the result until written, so it counts against server.maxResultBytesInFlight too: a
// 2025-11-25 client's call needs the budget a 2026-07-28 client's call of the same result needs
// (found by trying budgets, so the test does not depend on how the response buffer grows) plus
// the copy. Under the 2026-07-28 call's least budget and half the result more it is refused;
// with twice the result more it gets the result whole.
func TestLegacyReshapedResultCounted(t *testing.T) {
	const (
		size = 320 << 10
		step = 32 << 10
	)
	be := mcptest.StartServer(t, "be")
	text := strings.Repeat("x", size)
	whole := func(budget int64, version string) bool {
		gw, _ := startLegacyGateway(t, gwSpec{Opts: upstreams.Options{MaxResultBytesInFlight: budget}},
			upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
		var opts []mcptest.ClientOption
		if version != "" {
			opts = append(opts, mcptest.WithProtocolVersion(version))
		}
		res, err := mcptest.Connect(t, gw.URL, opts...).CallTool(t.Context(),
			&mcp.CallToolParams{Name: "be__echo", Arguments: map[string]any{"text": text}})
		return err == nil && !res.IsError && strings.Contains(mcptest.ResultText(res), text)
	}
	least := int64(size)
	for ; !whole(least, ""); least += step {
		if least > 8*size {
			t.Fatalf("a 2026-07-28 call of %d bytes fits under no budget up to %d", size, least)
		}
	}
	if whole(least+size/2, "2025-11-25") {
		t.Errorf("a 2025-11-25 call fit under %d bytes, the least a 2026-07-28 call needs (%d) and half the result: its reshaped copy was not counted",
			least+size/2, least)
	}
	if !whole(least+2*size, "2025-11-25") {
		t.Errorf("a 2025-11-25 call did not fit under %d bytes, room for the result's copy twice over", least+2*size)
	}
}

// askBigTool asks one form elicitation whose message is its "size" argument's worth of bytes,
// and once answered says so.
func askBigTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if len(req.Params.InputResponses) > 0 {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil
	}
	var args struct {
		Size int `json:"size"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, err
	}
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}}
	return &mcp.CallToolResult{RequestState: "ask_big/v1", InputRequests: mcp.InputRequestMap{
		"big": &mcp.ElicitParams{Mode: "form", Message: strings.Repeat("m", args.Size), RequestedSchema: schema}}}, nil
}

// TestLegacyAskedRequestsCounted: the input_required result a pre-2026 client's call gets
// becomes requests written on its stream; the copy kept for that and the requests built from it
// are held until written, to a client that may read slowly, so they count against
// server.maxResultBytesInFlight too, as the input_required result a 2026-07-28 client is written
// does. Before, the result's budget was given back when the round's pipeline ended and the
// requests were written with nothing charged. A 2025-11-25 go-sdk client's call needs the budget
// a 2026-07-28 client's call of the same tool needs (found by trying budgets, so the test does
// not depend on how buffers grow) plus the two copies: under the 2026-07-28 call's least budget
// and half the message more it is refused; with three times the message more it is asked.
func TestLegacyAskedRequestsCounted(t *testing.T) {
	const (
		size = 320 << 10
		step = 32 << 10
	)
	be := mcptest.StartServer(t, "be", mcptest.WithTool(&mcp.Tool{Name: "ask_big",
		InputSchema: &jsonschema.Schema{Type: "object"}}, askBigTool))
	asked := func(budget int64, version string) bool {
		gw, _ := startAskingGateway(t, gwSpec{Opts: upstreams.Options{MaxResultBytesInFlight: budget}},
			upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
		var saw atomic.Bool
		opts := []mcptest.ClientOption{mcptest.WithElicitation(func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			saw.Store(len(req.Params.Message) == size)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		})}
		if version != "" {
			opts = append(opts, mcptest.WithProtocolVersion(version))
		}
		res, err := mcptest.Connect(t, gw.URL, opts...).CallTool(t.Context(),
			&mcp.CallToolParams{Name: "be__ask_big", Arguments: map[string]any{"size": size}})
		return err == nil && !res.IsError && saw.Load()
	}
	least := int64(size)
	for ; !asked(least, ""); least += step {
		if least > 8*size {
			t.Fatalf("a 2026-07-28 call asking %d bytes fits under no budget up to %d", size, least)
		}
	}
	if asked(least+size/2, "2025-11-25") {
		t.Errorf("a 2025-11-25 call was asked under %d bytes, the least a 2026-07-28 call needs (%d) and half the request: its copies were not counted",
			least+size/2, least)
	}
	if !asked(least+3*size, "2025-11-25") {
		t.Errorf("a 2025-11-25 call was not asked under %d bytes, room for the request's copies and more", least+3*size)
	}
}
