package mcphttp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLegacyClientRefusal: a pre-2026 client's initialize is refused with -32022 naming the
// version it asked for (its params.protocolVersion, not the header it does not send) and, in the
// message its SDK shows the user too, the version the gateway speaks.
func TestLegacyClientRefusal(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw := startGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	for _, tt := range []struct {
		name, header, body, requested string
	}{
		{"initialize 2025-11-25", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, "2025-11-25"},
		{"initialize 2025-06-18 with a header", "2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, "2025-06-18"},
		{"a legacy session's call", "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, "2025-11-25"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := with(modern("initialize", ""), "MCP-Protocol-Version", tt.header)
			r := do(t, "POST", gw.URL, h, tt.body)
			checkRPC(t, r, -32022)
			var d struct{ Requested string }
			if err := json.Unmarshal(r.RPC.Error.Data, &d); err != nil || d.Requested != tt.requested {
				t.Errorf("data %s, want requested %q", r.RPC.Error.Data, tt.requested)
			}
			if msg := r.RPC.Error.Message; !strings.Contains(msg, "2026-07-28") || !strings.Contains(msg, tt.requested) {
				t.Errorf("message %q names neither the supported nor the requested version", msg)
			}
		})
	}
}
