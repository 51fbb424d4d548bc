//lint:file-ignore SA1019 pre-2026 clients and backends still use logging, sampling and roots, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package gateway

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestLegacyBackendLogs: a pre-2026 backend logs only at the level set on its session, which
// the gateway shares between callers; so the gateway sets it to debug once and relays to each
// request the messages at or above that request's own level. A 2025-11-25 client that set info
// gets the info and error messages of its call, not the debug one.
func TestLegacyBackendLogs(t *testing.T) {
	backend := mcptest.StartLegacyServer(t, "old", mcptest.WithoutDefaults(),
		mcptest.WithTool(&mcp.Tool{Name: "chatty", Description: "Logs at three levels.",
			InputSchema: &jsonschema.Schema{Type: "object"}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				for _, l := range []mcp.LoggingLevel{"debug", "info", "error"} {
					if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Data: "at " + string(l)}); err != nil {
						return nil, err
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			}))
	gw := startTestGateway(t, func(c *Config) {
		c.MRTR.Keys = testKeys
		c.Upstreams[0].Protocol = "2025-11-25"
	}, backend)
	var mu sync.Mutex
	var got []string
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithLogging(func(_ context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, string(req.Params.Level))
		}))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second call reuses the session whose level is already set
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "old__chatty", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %+v", err, res)
		}
	}
	// The client hands notifications to its handler on its own goroutine: wait for the four
	// expected (bounded), then check nothing else came.
	want := []string{"info", "error", "info", "error"}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Fatalf("log messages the client got: %v, want %v", got, want)
	}
	// Once per backend session, before its first call: the bridge may open a second session
	// when the first is still busy (a loaded machine), and that one gets its own setLevel.
	levels, called := map[string]int{}, map[string]bool{}
	for _, ex := range backend.Forwarded() {
		sid := ex.Header.Get("Mcp-Session-Id")
		switch {
		case strings.Contains(string(ex.Body), `"method":"logging/setLevel"`):
			levels[sid]++
		case strings.Contains(string(ex.Body), `"method":"tools/call"`):
			if !called[sid] && levels[sid] != 1 {
				t.Errorf("backend session %q got its first call after %d logging/setLevel, want 1", sid, levels[sid])
			}
			called[sid] = true
		}
	}
	if len(called) == 0 {
		t.Fatal("the backend got no tools/call")
	}
	for sid, n := range levels {
		if n != 1 {
			t.Errorf("backend session %q got %d logging/setLevel, want 1 (once per session)", sid, n)
		}
	}
}
