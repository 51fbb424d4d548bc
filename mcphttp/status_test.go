package mcphttp

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestStatusTable drives every row of the status table of docs/protocol.md §2.3 and the transport rules
// of §2.1 through the real HTTP stack, asserting the status, the JSON-RPC code, the headers the
// status requires, and — for every rejected request — that the backend received nothing.
func TestStatusTable(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithRegionTool())
	gw := startGateway(t, Config{MaxBodyBytes: 64 << 10}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	// A tools/call reads the tool's Mcp-Param-* bindings from the backend's tools/list, indexed
	// for at least half a minute from any list the gateway fetched: list first, as a client does,
	// so the rows refused for their headers reach the backend with nothing at all.
	if r := do(t, "POST", gw.URL, modern("tools/list", ""), body("tools/list", "")); r.Status != 200 {
		t.Fatalf("tools/list: %d %s", r.Status, r.Body)
	}
	region := modern("tools/call", "be__region")
	regionArgs := func(args string) string { return body("tools/call", `,"name":"be__region","arguments":{`+args+`}`) }
	twice := with(region, "Mcp-Param-Region", "eu")
	twice.Add("Mcp-Param-Region", "eu")
	list := modern("tools/list", "")
	twoTypes := with(list)
	twoTypes.Add("Content-Type", "text/plain")
	call := modern("tools/call", "be__echo")
	echo := body("tools/call", `,"name":"be__echo","arguments":{"text":"hi"}`)
	big := body("tools/list", `,"pad":"`+strings.Repeat("x", 70<<10)+`"`)
	v999 := strings.Replace(body("tools/list", ""), `"2026-07-28"`, `"v999.0.0"`, 1)

	tests := []struct {
		name       string
		method     string
		header     http.Header
		body       string
		status     int
		code       int    // 0: no JSON-RPC error expected
		wantHeader string // "Name: value" the response must carry
		forwarded  bool   // the backend must have been reached
	}{
		{"GET is 405", http.MethodGet, list, "", 405, 0, "Allow: POST", false},
		{"DELETE is 405", http.MethodDelete, list, "", 405, 0, "Allow: POST", false},
		{"PUT is 405", http.MethodPut, list, body("tools/list", ""), 405, 0, "Allow: POST", false},
		{"PATCH is 405", http.MethodPatch, list, body("tools/list", ""), 405, 0, "Allow: POST", false},
		// Methods no route names are refused alike, not answered by the router's fallback
		// (204 to OPTIONS, an Allow header naming the methods refused above).
		{"HEAD is 405", http.MethodHead, list, "", 405, 0, "Allow: POST", false},
		{"OPTIONS is 405", http.MethodOptions, list, "", 405, 0, "Allow: POST", false},
		{"TRACE is 405", http.MethodTrace, list, "", 405, 0, "Allow: POST", false},
		{"an extension method is 405", "PURGE", list, body("tools/list", ""), 405, 0, "Allow: POST", false},
		{"wrong content type", "POST", with(list, "Content-Type", "text/plain"), body("tools/list", ""), 415, -32600, "", false},
		// The body must be JSON as sent: a coding the gateway does not decode is refused for
		// what it is, whether the body is compressed or only labelled so, and so is a second
		// Content-Type that another reader could take instead.
		{"gzip body", "POST", with(list, "Content-Encoding", "gzip"), gzipped(t, body("tools/list", "")), 415, -32600, "Accept-Encoding: identity", false},
		{"plain body labelled gzip", "POST", with(list, "Content-Encoding", "gzip"), body("tools/list", ""), 415, -32600, "Accept-Encoding: identity", false},
		{"a coding after identity", "POST", with(list, "Content-Encoding", "identity, br"), body("tools/list", ""), 415, -32600, "Accept-Encoding: identity", false},
		{"two Content-Types", "POST", twoTypes, body("tools/list", ""), 415, -32600, "", false},
		{"identity coding", "POST", with(list, "Content-Encoding", "Identity"), body("tools/list", ""), 200, 0, "", true},
		{"Accept without SSE", "POST", with(list, "Accept", "application/json"), body("tools/list", ""), 400, -32600, "", false},
		{"Accept refusing JSON beside */*", "POST", with(list, "Accept", "application/json;q=0, */*"), body("tools/list", ""), 400, -32600, "", false},
		{"body over the limit", "POST", list, big, 413, -32600, "", false},
		{"invalid JSON", "POST", list, `{"jsonrpc":`, 400, -32700, "", false},
		{"batch", "POST", list, "[" + body("tools/list", "") + "]", 400, -32600, "", false},
		{"posted response", "POST", list, `{"jsonrpc":"2.0","id":1,"result":{}}`, 400, -32600, "", false},
		{"jsonrpc 1.0", "POST", list, `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, 400, -32600, "", false},
		{"unknown member", "POST", list, strings.Replace(body("tools/list", ""), `"id":`, `"extra":1,"id":`, 1), 400, -32600, "", false},
		{"null id", "POST", list, strings.Replace(body("tools/list", ""), `"id":1`, `"id":null`, 1), 400, -32600, "", false},
		{"fractional id", "POST", list, strings.Replace(body("tools/list", ""), `"id":1`, `"id":1.5`, 1), 400, -32600, "", false},
		{"duplicate params key", "POST", call, body("tools/call", `,"name":"be__echo","name":"be__add"`), 400, -32602, "", false},
		{"no _meta", "POST", list, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, 400, -32602, "", false},
		{"no clientCapabilities", "POST", list, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, 400, -32602, "", false},
		{"no version header", "POST", with(list, "MCP-Protocol-Version", ""), body("tools/list", ""), 400, -32020, "", false},
		{"version header mismatch", "POST", with(list, "MCP-Protocol-Version", "2025-11-25"), body("tools/list", ""), 400, -32020, "", false},
		{"mismatch before version support", "POST", list, v999, 400, -32020, "", false},
		{"unsupported version", "POST", with(list, "MCP-Protocol-Version", "v999.0.0"), v999, 400, -32022, "", false},
		{"legacy initialize", "POST", with(list, "MCP-Protocol-Version", "", "Mcp-Method", "initialize"), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, 400, -32022, "", false},
		{"initialize is not a method", "POST", modern("initialize", ""), body("initialize", ""), 404, -32601, "", false},
		{"ping is not a method", "POST", modern("ping", ""), body("ping", ""), 404, -32601, "", false},
		{"resources/subscribe is gone", "POST", modern("resources/subscribe", ""), body("resources/subscribe", `,"uri":"x"`), 404, -32601, "", false},
		{"unknown method", "POST", modern("unknown/method", ""), body("unknown/method", ""), 404, -32601, "", false},
		{"Mcp-Method missing", "POST", with(list, "Mcp-Method", ""), body("tools/list", ""), 400, -32020, "", false},
		{"Mcp-Method mismatch", "POST", with(list, "Mcp-Method", "prompts/list"), body("tools/list", ""), 400, -32020, "", false},
		{"Mcp-Method is case-sensitive", "POST", with(list, "Mcp-Method", "TOOLS/LIST"), body("tools/list", ""), 400, -32020, "", false},
		{"Mcp-Name missing", "POST", with(call, "Mcp-Name", ""), echo, 400, -32020, "", false},
		{"Mcp-Name mismatch", "POST", with(call, "Mcp-Name", "be__add"), echo, 400, -32020, "", false},
		{"Mcp-Name bad sentinel", "POST", with(call, "Mcp-Name", "=?base64?***?="), echo, 400, -32020, "", false},
		{"Mcp-Name sentinel decoded", "POST", with(call, "Mcp-Name", "=?base64?YmVfX2VjaG8=?="), echo, 200, 0, "", true},
		{"tools/call without name", "POST", with(call, "Mcp-Name", ""), body("tools/call", ""), 400, -32602, "", false},
		{"notification accepted", "POST", list, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, 202, 0, "", false},
		{"foreign Origin", "POST", with(list, "Origin", "https://evil.example"), body("tools/list", ""), 403, -32600, "", false},
		{"DNS rebinding Host", "POST", with(list, "Host", "evil.example.com", "Origin", "http://evil.example.com"), body("tools/list", ""), 403, -32600, "", false},
		// A tool its backend does not list is unknown at the gateway: a backend that folds
		// names could otherwise run a listed tool no rule judged (listed.go).
		{"unknown tool", "POST", modern("tools/call", "be__nope"), body("tools/call", `,"name":"be__nope"`), 400, -32602, "", false},
		{"unknown backend", "POST", modern("tools/call", "zz__echo"), body("tools/call", `,"name":"zz__echo"`), 400, -32602, "", false},
		{"tools/call forwarded", "POST", call, echo, 200, 0, "", true},
		// A modern request's Mcp-Session-Id is ignored (the _meta version decides the era), and
		// upstreams' TestCallHeadersReachingBackend shows it is not passed on.
		{"modern request with a session id", "POST", with(call, "Mcp-Session-Id", "made-up"), echo, 200, 0, "", true},
		// Mcp-Param-* (issue 15): each mirrored argument checked against the body.
		{"Mcp-Param matches", "POST", with(region, "Mcp-Param-Region", "eu"), regionArgs(`"region":"eu"`), 200, 0, "", true},
		{"Mcp-Param sentinel decoded", "POST", with(region, "Mcp-Param-Region", "=?base64?ZXU=?="), regionArgs(`"region":"eu"`), 200, 0, "", true},
		{"Mcp-Param integer compared numerically", "POST", with(region, "Mcp-Param-Count", "42"), regionArgs(`"count":42.0`), 200, 0, "", true},
		{"Mcp-Param absent with its argument", "POST", region, regionArgs(`"region":null`), 200, 0, "", true},
		{"Mcp-Param mismatch", "POST", with(region, "Mcp-Param-Region", "us"), regionArgs(`"region":"eu"`), 400, -32020, "", false},
		{"Mcp-Param integer mismatch", "POST", with(region, "Mcp-Param-Count", "43"), regionArgs(`"count":42`), 400, -32020, "", false},
		{"Mcp-Param missing for a present argument", "POST", region, regionArgs(`"region":"eu"`), 400, -32020, "", false},
		{"Mcp-Param for an absent argument", "POST", with(region, "Mcp-Param-Region", "eu"), regionArgs(``), 400, -32020, "", false},
		{"Mcp-Param for a null argument", "POST", with(region, "Mcp-Param-Region", "eu"), regionArgs(`"region":null`), 400, -32020, "", false},
		{"Mcp-Param not declared by the tool", "POST", with(call, "Mcp-Param-Region", "eu"), echo, 400, -32020, "", false},
		{"Mcp-Param twice", "POST", twice, regionArgs(`"region":"eu"`), 400, -32020, "", false},
		{"Mcp-Param bad sentinel", "POST", with(region, "Mcp-Param-Region", "=?base64?***?="), regionArgs(`"region":"eu"`), 400, -32020, "", false},
		{"Mcp-Param argument not mirrorable", "POST", with(region, "Mcp-Param-Region", "eu"), regionArgs(`"region":["eu"]`), 400, -32020, "", false},
		{"Mcp-Param argument case variant", "POST", region, regionArgs(`"Region":"eu"`), 400, -32602, "", false},
		{"case-variant params member", "POST", call, body("tools/call", `,"name":"be__echo","arguments":{"text":"hi"},"NAME":"be__add"`), 400, -32602, "", false},
		{"loopback Origin allowed", "POST", with(list, "Origin", "http://127.0.0.1:1234"), body("tools/list", ""), 200, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			be.Reset()
			r := do(t, tt.method, gw.URL, tt.header, tt.body)
			if r.Status != tt.status {
				t.Fatalf("status = %d, want %d; body %s", r.Status, tt.status, r.Body)
			}
			if tt.wantHeader != "" {
				k, v, _ := strings.Cut(tt.wantHeader, ": ")
				if got := r.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			checkRPC(t, r, tt.code)
			if got := len(be.Requests()) > 0; got != tt.forwarded {
				t.Errorf("backend reached = %v, want %v", got, tt.forwarded)
			}
		})
	}
}

func checkRPC(t *testing.T, r *response, code int) {
	t.Helper()
	mcptest.CheckRPC(t, r, code)
}

// TestParamHeadersRecomputed: the backend receives the Mcp-Param-* headers the gateway
// computed from the arguments it checked (plain where the client used the sentinel, an integer
// in decimal however the client spelled it), never the client's own spelling.
func TestParamHeadersRecomputed(t *testing.T) {
	be := mcptest.StartServer(t, "be", mcptest.WithRegionTool())
	gw := startGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	h := with(modern("tools/call", "be__region"), "Mcp-Param-Region", "=?base64?ZXU=?=", "Mcp-Param-Count", "4.2e1")
	r := do(t, "POST", gw.URL, h, body("tools/call", `,"name":"be__region","arguments":{"region":"eu","count":42}`))
	checkRPC(t, r, 0)
	if !strings.Contains(string(r.Body), "region=eu count=42") {
		t.Fatalf("the backend saw other headers: %s", r.Body)
	}
}

// gzipped is s compressed with gzip.
func gzipped(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestOtherMethodsRefused: every method but POST (and GET, with the pre-2026 edge) is 405 with
// Allow: POST on the endpoint and on a tool set's path alike, those no route names included
// (the router's fallback would answer OPTIONS 204 and list, in Allow, the methods it refuses),
// and nothing reaches the backend.
func TestOtherMethodsRefused(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw := startGateway(t, Config{Toolsets: []ToolsetConfig{{Name: "ro", Path: "/tools/ro", Include: []SelectorConfig{{}}}}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	base := strings.TrimSuffix(gw.URL, DefaultPath)
	for _, path := range []string{DefaultPath, "/tools/ro"} {
		for _, method := range []string{http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodConnect, "PROPFIND", "PURGE", http.MethodDelete} {
			r := do(t, method, base+path, modern("tools/list", ""), "")
			if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != http.MethodPost {
				t.Errorf("%s %s: %d, Allow %q; want 405, Allow: POST", method, path, r.Status, r.Header.Get("Allow"))
			}
		}
	}
	if n := len(be.Requests()); n != 0 {
		t.Errorf("the backend got %d requests", n)
	}
}
