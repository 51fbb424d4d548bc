package mcphttp

import (
	"net/http"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestHeaderNamesReadAsMirrors: a header whose name is that of a header the gateway checks
// against the body (Mcp-Method, Mcp-Name, MCP-Protocol-Version, an Mcp-Param-*) with '_', or
// any other character but a letter or a digit, for '-' is refused with 400/-32020 and reaches no
// backend. Servers that expose headers as CGI or WSGI variables (HTTP_MCP_METHOD) read
// "Mcp_Method" and "Mcp-Method" as one header, and several ("Mcp.Method" too), so an
// intermediary of that kind in front of the gateway could route on a value the gateway never
// compared with the body, while the gateway checked and forwarded the other. Before, such a
// header was ignored and the call went through. A name with '_' that reads as no checked header,
// and an Mcp-Param-* whose argument part holds '_' (the tool's own name for it), are not
// refused for that.
func TestHeaderNamesReadAsMirrors(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithRegionTool())
	gw := startGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	if r := do(t, "POST", gw.URL, modern("tools/list", ""), body("tools/list", "")); r.Status != 200 {
		t.Fatalf("tools/list: %d %s", r.Status, r.Body)
	}
	call := body("tools/call", `,"name":"be__region","arguments":{"region":"eu"}`)
	for _, tt := range []struct {
		name, value string
		refused     bool
	}{
		{"Mcp_Method", "tools/list", true},
		{"MCP_METHOD", "tools/call", true},
		{"Mcp_Name", "be__echo", true},
		{"mcp_name", "be__region", true},
		{"Mcp_Protocol_Version", "2025-11-25", true},
		{"MCP-Protocol_Version", "2026-07-28", true},
		{"Mcp_Param_Region", "us", true},
		{"Mcp-Param_Region", "us", true},
		{"mcp_param-region", "eu", true},
		{"Mcp.Name", "be__echo", true},
		{"Mcp~Method", "tools/list", true},
		{"MCP.Protocol.Version", "2025-11-25", true},
		{"Mcp.Param.Region", "us", true},
		{"Mcp+Param-Region", "us", true},
		{"X.Request.Tag", "a", false},
		{"X_Request_Tag", "a", false},
		{"Mcp_Session", "a", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			be.Reset()
			h := with(modern("tools/call", "be__region"), "Mcp-Param-Region", "eu")
			h[tt.name] = []string{tt.value}
			r := do(t, "POST", gw.URL, h, call)
			if !tt.refused {
				if r.Status != http.StatusOK || r.RPC.Error != nil {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
				return
			}
			if r.Status != http.StatusBadRequest || r.RPC.Error == nil || r.RPC.Error.Code != -32020 {
				t.Fatalf("%d %s, want 400 -32020", r.Status, r.Body)
			}
			if n := len(be.RequestsOf("tools/call")); n != 0 {
				t.Fatalf("the backend got %d calls", n)
			}
		})
	}
}

// TestNameHeaderOnlyWhereItMirrors: Mcp-Name mirrors the name or URI of a tools/call, prompts/get
// or resources/read (SEP-2243). On any other method it mirrors nothing the gateway could compare
// it with, so it is refused with 400/-32020 rather than left for an intermediary in front of the
// gateway to act on: a completion of one prompt passing as a request about another, a list
// passing as a call. The pre-2026 edge refuses it alike. Before, a 2026-07-28 request carried it
// unchecked.
func TestNameHeaderOnlyWhereItMirrors(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw := startGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	for _, tt := range []struct{ method, extra string }{
		{"completion/complete", `,"ref":{"type":"ref/prompt","name":"be__greet"},"argument":{"name":"name","value":"A"}`},
		{"tools/list", ""},
		{"prompts/list", ""},
		{"server/discover", ""},
	} {
		t.Run(tt.method, func(t *testing.T) {
			be.Reset()
			r := do(t, "POST", gw.URL, with(modern(tt.method, ""), "Mcp-Name", "be__echo"), body(tt.method, tt.extra))
			if r.Status != http.StatusBadRequest || r.RPC.Error == nil || r.RPC.Error.Code != -32020 {
				t.Fatalf("%d %s, want 400 -32020", r.Status, r.Body)
			}
			if n := len(be.RequestsOf(tt.method)); n != 0 {
				t.Fatalf("the backend got %d requests", n)
			}
			if r := do(t, "POST", gw.URL, modern(tt.method, ""), body(tt.method, tt.extra)); r.Status != http.StatusOK || r.RPC.Error != nil {
				t.Fatalf("without the header: %d %s", r.Status, r.Body)
			}
		})
	}
}
