package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestLegacyAndModernBackends: a 2026-07-28 client (the go-sdk) uses a 2025-11-25 backend (the
// go-sdk's stateful server, with sessions) and a 2026-07-28 one through one gateway without
// noticing the difference: lists from both, calls, progress over SSE from the legacy one.
func TestLegacyAndModernBackends(t *testing.T) {
	legacy := mcptest.StartLegacyServer(t, "old")
	modern := mcptest.StartServer(t, "new")
	gw := startTestGateway(t, nil, legacy, modern)
	progressed := make(chan float64, 8)
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProgress(
		func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { progressed <- req.Params.Progress }))
	ctx := context.Background()

	names := toolNames(t, cs)
	for _, want := range []string{"old__echo", "old__progress", "new__echo"} {
		if !contains(names, want) {
			t.Fatalf("tools/list lacks %s: %v", want, names)
		}
	}
	for _, name := range []string{"old__echo", "new__echo"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "hi " + name}})
		if err != nil || res.IsError || mcptest.ResultText(res) != "hi "+name {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	params := &mcp.CallToolParams{Name: "old__progress", Arguments: map[string]any{"steps": 2}}
	params.SetProgressToken("legacy-progress")
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		t.Fatalf("old__progress: %v %+v", err, res)
	}
	for range 2 {
		select {
		case <-progressed:
		case <-time.After(5 * time.Second):
			t.Fatal("progress from the legacy backend did not reach the client")
		}
	}
	// The legacy backend saw a session handshake and, past the era probe (a modern
	// server/discover it answers as a legacy server), no 2026 metadata.
	var sawInit, sawSession bool
	for _, r := range legacy.Forwarded() {
		sawInit = sawInit || strings.Contains(string(r.Body), `"method":"initialize"`)
		sawSession = sawSession || r.Header.Get("Mcp-Session-Id") != ""
		if strings.Contains(string(r.Body), "io.modelcontextprotocol/clientCapabilities") {
			t.Errorf("the legacy backend received 2026 _meta: %s", r.Body)
		}
	}
	if !sawInit || !sawSession {
		t.Errorf("legacy backend: initialize seen %v, session header seen %v", sawInit, sawSession)
	}
}
