package mcptest

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkDirect measures go-sdk client → go-sdk stateless server on
// loopback with no gateway in between: the baseline that the gateway's
// overhead benchmarks compare against. Reported, never asserted.
func BenchmarkDirect(b *testing.B) {
	cases := []struct {
		name   string
		params *mcp.CallToolParams
	}{
		{"echo", &mcp.CallToolParams{Name: ToolEcho, Arguments: map[string]any{"text": "hello"}}},
		{"progress3", withToken(&mcp.CallToolParams{Name: ToolProgress, Arguments: map[string]any{"steps": 3}}, "bench")},
	}
	srv := StartServer(b, "bench")
	cs := Connect(b, srv.URL(), WithProgress(func(_ context.Context, _ *mcp.ProgressNotificationClientRequest) {}))
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(b.Context(), c.params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("tools_list", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cs.ListTools(b.Context(), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
