package mcphttp

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestParamHeaderNamesReadAlike: a tool whose x-mcp-header names differ only in the character
// between their words ("Tenant_Id" and "Tenant-Id", "Tenant.Id") declares one header twice to
// servers that read headers as CGI variables (HTTP_MCP_PARAM_TENANT_ID), as the gateway's own
// check of header names holds (TestHeaderNamesReadAsMirrors). Both SDKs take such a tool, and
// the gateway bound both headers and sent both, each checked against its own argument, so an
// intermediary of that kind, in front of the gateway or of the backend, read one argument's
// value for the other's. Its calls are now refused (400/-32602, the declarations are invalid)
// and reach no backend; a tool whose names differ otherwise is served.
func TestParamHeaderNamesReadAlike(t *testing.T) {
	tool := func(name, home, away string) mcptest.Option {
		return mcptest.WithTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"home": map[string]any{"type": "string", "x-mcp-header": home},
			"away": map[string]any{"type": "string", "x-mcp-header": away},
		}}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + name}}}, nil
		})
	}
	be := mcptest.StartServer(t, "be", tool("underscore", "Tenant_Id", "Tenant-Id"), tool("dot", "Tenant.Id", "tenant-id"),
		tool("distinct", "Tenant-Id", "TenantId"))
	gw := startGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	for _, tt := range []struct {
		tool, home, away string
		served           bool
	}{
		{"underscore", "Tenant_Id", "Tenant-Id", false},
		{"dot", "Tenant.Id", "tenant-id", false},
		{"distinct", "Tenant-Id", "TenantId", true},
	} {
		be.Reset()
		name := "be__" + tt.tool
		h := modern("tools/call", name)
		h["Mcp-Param-"+tt.home] = []string{"acme"}
		h["Mcp-Param-"+tt.away] = []string{"globex"}
		r := do(t, "POST", gw.URL, h, body("tools/call", `,"name":"`+name+`","arguments":{"home":"acme","away":"globex"}`))
		if tt.served {
			if r.Status != 200 || r.RPC.Error != nil || !strings.Contains(string(r.RPC.Result), "ran "+tt.tool) {
				t.Errorf("%s: %d %s", tt.tool, r.Status, r.Body)
			}
			continue
		}
		if r.Status != 400 || r.RPC.Error == nil || r.RPC.Error.Code != -32602 || !strings.Contains(r.RPC.Error.Message, "x-mcp-header names a header twice") {
			t.Errorf("%s: %d %s, want 400 -32602 naming the header twice", tt.tool, r.Status, r.Body)
		}
		if n := len(be.RequestsOf("tools/call")); n != 0 {
			t.Errorf("%s: the backend got %d calls", tt.tool, n)
		}
	}
}
