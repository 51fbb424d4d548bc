package main

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/demo"
	"github.com/mcp-gateway/gateway/internal/mcptest"
)

// TestConfirmDestructiveTools: with server.confirmDestructiveTools, a tool annotated
// destructiveHint (the demo's notes delete_note) is confirmed before it runs; other tools are not.
func TestConfirmDestructiveTools(t *testing.T) {
	ctx := context.Background()
	backends, err := demo.Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backends.Close() })
	gw := startTestGateway(t, func(c *Config) {
		c.Server.ConfirmDestructiveTools = true
		c.MRTR.Keys = testKeys
		for _, b := range backends.List() {
			c.Upstreams = append(c.Upstreams, UpstreamConfig{Name: b.Name, URL: b.URL})
		}
	})
	var asked atomic.Int32
	var approve atomic.Bool
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithElicitation(
		func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": approve.Load()}}, nil
		}))
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	call("notes__add_note", map[string]any{"title": "keep me"})
	if n := asked.Load(); n != 0 {
		t.Fatalf("a non-destructive tool was confirmed %d times", n)
	}
	if res := call("notes__delete_note", map[string]any{"id": "1"}); !res.IsError || asked.Load() != 1 {
		t.Fatalf("declined delete: asked %d, result %+v", asked.Load(), res)
	}
	if got := text(t, call("notes__get_note", map[string]any{"id": "1"})); !strings.Contains(got, "keep me") {
		t.Fatalf("the declined delete ran: get_note = %q", got)
	}
	approve.Store(true)
	if res := call("notes__delete_note", map[string]any{"id": "1"}); res.IsError || asked.Load() != 2 {
		t.Fatalf("approved delete: asked %d, result %+v", asked.Load(), res)
	}
	if res := call("notes__get_note", map[string]any{"id": "1"}); !res.IsError {
		t.Fatalf("the approved delete did not run: %+v", res)
	}
}
