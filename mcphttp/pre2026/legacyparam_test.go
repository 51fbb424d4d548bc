package pre2026

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLegacyParamHeadersChecked: a pre-2026 client owes the gateway no Mcp-Param-* header, but
// one it sends is held to the arguments as a 2026-07-28 client's is, as its Mcp-Method and
// Mcp-Name are: something between it and the gateway may route or enforce policy on them
// (SEP-2243), and what that reads must be what the backend acts on. A header that contradicts its
// argument, mirrors an absent one, is not declared by the tool, is sent twice or is not validly
// encoded (or reads as the sentinel to some receivers and not to others), and any Mcp-Param-* header on a request that is not a tools/call or on a 2025-03-26
// batch, is 400/-32020 and reaches no backend, of either era. Before, the edge dropped them
// unread and the call went through with the backend told another value.
func TestLegacyParamHeadersChecked(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__region","arguments":{"region":"eu-west","count":42}}}`
	prompt := `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"be__greet","arguments":{"name":"Ada"}}}`
	for _, era := range []struct {
		name  string
		start func(testing.TB, string, ...mcptest.Option) *mcptest.Server
	}{{"2026-07-28 backend", mcptest.StartServer}, {"2025-11-25 backend", mcptest.StartLegacyServer}} {
		t.Run(era.name, func(t *testing.T) {
			be := era.start(t, "be", mcptest.WithRegionTool())
			gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
			sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
			for _, tt := range []struct {
				name, body string
				h          http.Header
				agree      bool
			}{
				{"a header that contradicts its argument", call, http.Header{"Mcp-Param-Region": {"us-east"}}, false},
				{"a number that contradicts its argument", call, http.Header{"Mcp-Param-Count": {"41"}}, false},
				{"the contradiction in base64", call, http.Header{"Mcp-Param-Region": {"=?base64?dXMtZWFzdA==?="}}, false},
				{"a header twice", call, http.Header{"Mcp-Param-Region": {"eu-west", "us-east"}}, false},
				{"a header not validly encoded", call, http.Header{"Mcp-Param-Region": {"=?base64?!!?="}}, false},
				// Read as the sentinel of "" by the TypeScript SDK, as the text by the Go SDK.
				{"a sentinel whose prefix and suffix share a '?'", strings.Replace(call, `"eu-west"`, `"=?base64?="`, 1),
					http.Header{"Mcp-Param-Region": {"=?base64?="}}, false},
				{"a header the tool does not declare", call, http.Header{"Mcp-Param-Tenant": {"acme"}}, false},
				{"a header of an absent argument", strings.Replace(call, `,"count":42`, "", 1), http.Header{"Mcp-Param-Count": {"42"}}, false},
				{"a header on a prompt", prompt, http.Header{"Mcp-Param-Name": {"Ada"}}, false},
				{"headers that agree", call, http.Header{"Mcp-Param-Region": {"eu-west"}, "Mcp-Param-Count": {"42"}}, true},
				{"one header that agrees", call, http.Header{"Mcp-Param-Region": {"=?base64?ZXUtd2VzdA==?="}}, true},
			} {
				t.Run(tt.name, func(t *testing.T) {
					be.Reset()
					h := legacyHeaders("2025-11-25", sid)
					for k, v := range tt.h {
						h[k] = v
					}
					r := do(t, "POST", gw.URL, h, tt.body)
					if tt.agree {
						if r.Status != http.StatusOK || r.RPC.Error != nil || !strings.Contains(string(r.Body), "region=eu-west count=42") {
							t.Fatalf("%d %s", r.Status, r.Body)
						}
						return
					}
					if r.Status != http.StatusBadRequest || r.RPC.Error == nil || r.RPC.Error.Code != -32020 {
						t.Fatalf("%d %s, want 400 -32020", r.Status, r.Body)
					}
					if n := len(be.RequestsOf("tools/call")) + len(be.RequestsOf("prompts/get")); n != 0 {
						t.Fatalf("the backend got %d requests", n)
					}
				})
			}
		})
	}
}

// TestLegacyBatchParamHeadersRefused: a 2025-03-26 batch holds several messages, which one set
// of Mcp-Param-* headers cannot mirror: refused whole, as Mcp-Method and Mcp-Name are on a batch.
func TestLegacyBatchParamHeadersRefused(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithRegionTool())
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	be.Reset()
	h := legacyHeaders("", sid)
	h.Set("Mcp-Param-Region", "us-east")
	r := do(t, "POST", gw.URL, h, batchOf(
		rpc(1, "tools/call", `{"name":"be__region","arguments":{"region":"eu-west"}}`),
		rpc(2, "tools/call", `{"name":"be__region","arguments":{"region":"ap-south"}}`),
	))
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "-32020") {
		t.Fatalf("%d %s, want 400 -32020", r.Status, r.Body)
	}
	if n := len(be.RequestsOf("tools/call")); n != 0 {
		t.Fatalf("the backend got %d calls", n)
	}
}

// TestLegacyHeaderNamesReadAsMirrors: a pre-2026 client's header named as Mcp-Method, Mcp-Name,
// MCP-Protocol-Version or an Mcp-Param-* with '_' (or another character but a letter or a digit)
// for '-', which servers exposing headers as CGI or WSGI variables read as that header, is refused as a 2026-07-28 client's is, on a single
// request and on a 2025-03-26 batch (TestHeaderNamesReadAsMirrors in package mcphttp).
func TestLegacyHeaderNamesReadAsMirrors(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithRegionTool())
	gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"be__region","arguments":{"region":"eu-west"}}}`
	for _, v := range []string{"2025-11-25", "2025-03-26"} {
		sid, _ := legacyInit(t, gw.URL, v, `{}`)
		version := v
		if v == "2025-03-26" {
			version = "" // its clients send no MCP-Protocol-Version
		}
		for _, name := range []string{"Mcp_Method", "Mcp_Name", "MCP_Protocol_Version", "Mcp_Param_Region", "mcp-param_region",
			"Mcp.Name", "Mcp~Method", "Mcp.Param.Region"} {
			for _, b := range []string{call, "[" + call + "]"} {
				if b[0] == '[' && v != "2025-03-26" {
					continue
				}
				be.Reset()
				h := legacyHeaders(version, sid)
				h[name] = []string{"us-east"}
				r := do(t, "POST", gw.URL, h, b)
				if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "-32020") {
					t.Errorf("%s, %s, %.1s: %d %s, want 400 -32020", v, name, b, r.Status, r.Body)
				}
				if n := len(be.RequestsOf("tools/call")); n != 0 {
					t.Errorf("%s, %s: the backend got %d calls", v, name, n)
				}
			}
		}
	}
}
