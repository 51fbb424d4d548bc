package era

import (
	"encoding/json"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

func TestInitializeResult(t *testing.T) {
	info := `{"name":"mcp-gateway","version":"1.4.0"}`
	meta := `"_meta":{"io.modelcontextprotocol/serverInfo":` + info + `}`
	tests := []struct{ name, version, discover, want string }{
		{"everything the edge serves", V20251125,
			`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"logging":{},"completions":{},` +
				`"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},"prompts":{},` +
				`"tasks":{},"experimental":{"x":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}},` +
				`"instructions":"Use \"echo\".\n",` + meta + `,"ttlMs":60000,"cacheScope":"public"}`,
			`{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"prompts":{},` +
				`"resources":{"listChanged":true},"completions":{},"logging":{}},"serverInfo":` + info + `,"instructions":"Use \"echo\".\u000a"}`},
		{"no capabilities, no instructions", V20250618, `{` + meta + `}`,
			`{"protocolVersion":"2025-06-18","capabilities":{"logging":{}},"serverInfo":` + info + `}`},
		{"listChanged false, odd values", V20250618,
			`{"capabilities":{"tools":{"listChanged":false},"prompts":true,"resources":{"listChanged":"yes"}},"instructions":7,` + meta + `}`,
			`{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{},"logging":{}},"serverInfo":` + info + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InitializeResult(tt.version, []byte(tt.discover), InitializeOptions{})
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON %s", got)
			}
		})
	}
	bad := []struct{ name, version, discover string }{
		{"modern version", V20260728, `{` + meta + `}`},
		{"unknown version", "2024-11-05", `{` + meta + `}`},
		{"no serverInfo", V20251125, `{"capabilities":{}}`},
		{"serverInfo not an object", V20251125, `{"_meta":{"io.modelcontextprotocol/serverInfo":"gw"}}`},
		{"not an object", V20251125, `[1]`},
		{"not JSON", V20251125, `{`},
		{"duplicate keys", V20251125, `{` + meta + `,` + meta + `}`},
		{"empty", V20251125, ``},
	}
	for _, tt := range bad {
		if got, err := InitializeResult(tt.version, []byte(tt.discover), InitializeOptions{}); err == nil {
			t.Errorf("%s: got %s, want an error", tt.name, got)
		}
	}
}

// TestInitializeResultSubscribe: resources.subscribe is advertised only when the edge serves it
// (its GET stream is on) and a backend supports it.
func TestInitializeResultSubscribe(t *testing.T) {
	info := `{"name":"gw","version":"1"}`
	meta := `"_meta":{"io.modelcontextprotocol/serverInfo":` + info + `}`
	tests := []struct {
		name, discover string
		serve          bool
		want           string
	}{
		{"served and supported", `{"capabilities":{"resources":{"subscribe":true,"listChanged":true}},` + meta + `}`, true,
			`{"resources":{"subscribe":true,"listChanged":true},"logging":{}}`},
		{"served, no listChanged", `{"capabilities":{"resources":{"subscribe":true}},` + meta + `}`, true,
			`{"resources":{"subscribe":true},"logging":{}}`},
		{"not served", `{"capabilities":{"resources":{"subscribe":true}},` + meta + `}`, false,
			`{"resources":{},"logging":{}}`},
		{"no backend supports it", `{"capabilities":{"resources":{"subscribe":false}},` + meta + `}`, true,
			`{"resources":{},"logging":{}}`},
		{"subscribe on another capability", `{"capabilities":{"tools":{"subscribe":true}},` + meta + `}`, true,
			`{"tools":{},"logging":{}}`},
	}
	for _, tt := range tests {
		got, err := InitializeResult(V20251125, []byte(tt.discover), InitializeOptions{ResourceSubscribe: tt.serve})
		want := `{"protocolVersion":"2025-11-25","capabilities":` + tt.want + `,"serverInfo":` + info + `}`
		if err != nil || string(got) != want {
			t.Errorf("%s: got %s, %v\nwant %s", tt.name, got, err, want)
		}
	}
}

// TestLogLevelAtLeast: a message passes a level exactly when it is at least as severe, in the
// order of jsonrpc.LogLevels; a message of a level no one ranks passes, a minimum no one ranks
// lets nothing through.
func TestLogLevelAtLeast(t *testing.T) {
	tests := []struct {
		level, min string
		want       bool
	}{
		{"debug", "info", false}, {"info", "info", true}, {"error", "info", true},
		{"warning", "error", false}, {"emergency", "debug", true}, {"odd", "error", true}, {"error", "bogus", false},
	}
	for _, tt := range tests {
		if got := LogLevelAtLeast(tt.level, tt.min); got != tt.want {
			t.Errorf("LogLevelAtLeast(%q, %q) = %v", tt.level, tt.min, got)
		}
	}
}

func TestToLegacyClientResult(t *testing.T) {
	tests := []struct{ name, method, version, in, want string }{
		{"list hints dropped", "prompts/list", V20251125,
			`{"prompts":[{"name":"p"}],"nextCursor":"c","resultType":"complete","ttlMs":5,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{}}}`,
			`{"prompts":[{"name":"p"}],"nextCursor":"c","_meta":{"io.modelcontextprotocol/serverInfo":{}}}`},
		{"no resultType", "resources/read", V20250618, `{"contents":[]}`, `{"contents":[]}`},
		{"object outputSchema kept", "tools/list", V20250618,
			`{"tools":[{"name":"a","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{}}}],"resultType":"complete"}`,
			`{"tools":[{"name":"a","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{}}}]}`},
		{"non-object outputSchemas dropped", "tools/list", V20251125,
			`{"tools":[{"name":"a","outputSchema":{"type":"array"},"title":"A"},{"name":"b","outputSchema":{"type":["object","null"]}},` +
				`{"name":"c","outputSchema":{}},{"name":"d","outputSchema":true},{"name":"e"}]}`,
			`{"tools":[{"name":"a","title":"A"},{"name":"b"},{"name":"c"},{"name":"d"},{"name":"e"}]}`},
		{"tools member of another method untouched", "tools/call", V20250618,
			`{"content":[],"tools":[{"outputSchema":{"type":"array"}}]}`, `{"content":[],"tools":[{"outputSchema":{"type":"array"}}]}`},
		{"object structuredContent kept", "tools/call", V20250618,
			`{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1},"resultType":"complete"}`,
			`{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`},
		{"array structuredContent carried by a text block already", "tools/call", V20251125,
			`{"content":[{"type":"text","text":"[1, 2.0, {\"b\": null}]"}],"structuredContent":[1,2,{"b":null}]}`,
			`{"content":[{"type":"text","text":"[1, 2.0, {\"b\": null}]"}]}`},
		{"array structuredContent gets a text block", "tools/call", V20250618,
			`{"content":[{"type":"text","text":"Here:"},{"type":"image","data":"","mimeType":"image/png"}],"structuredContent":[ 1, "é" ],"isError":false}`,
			`{"content":[{"type":"text","text":"Here:"},{"type":"image","data":"","mimeType":"image/png"},{"type":"text","text":"[1,\"é\"]"}],"isError":false}`},
		{"scalar structuredContent without content", "tools/call", V20250618,
			`{"structuredContent":42,"resultType":"complete"}`,
			`{"content":[{"type":"text","text":"42"}]}`},
		{"null structuredContent, empty content", "tools/call", V20251125,
			`{"content":[],"structuredContent":null}`, `{"content":[{"type":"text","text":"null"}]}`},
		{"tools not an array left alone", "tools/list", V20250618, `{"tools":{"a":1}}`, `{"tools":{"a":1}}`},
		{"empty result", "ping", V20251125, `{"resultType":"complete"}`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToLegacyClientResult(tt.method, tt.version, []byte(tt.in), nil)
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON %s", got)
			}
		})
	}
	bad := []struct{ name, method, version, in string }{
		{"input_required", "tools/call", V20251125, `{"resultType":"input_required","inputRequests":{}}`},
		{"task", "tools/call", V20251125, `{"resultType":"task","taskId":"t"}`},
		{"resultType not a string", "tools/call", V20251125, `{"resultType":1}`},
		{"modern version", "tools/call", V20260728, `{}`},
		{"not an object", "tools/list", V20251125, `[]`},
		{"not JSON", "tools/list", V20251125, `{"tools":`},
		{"duplicate keys", "tools/call", V20251125, `{"content":[],"content":[]}`},
		{"content not an array", "tools/call", V20250618, `{"content":{},"structuredContent":1}`},
	}
	for _, tt := range bad {
		if got, err := ToLegacyClientResult(tt.method, tt.version, []byte(tt.in), nil); err == nil {
			t.Errorf("%s: got %s, want an error", tt.name, got)
		}
	}
}

func TestLegacyClientError(t *testing.T) {
	notFound := &jsonrpc.Error{Code: -32602, Message: "Resource not found", Data: json.RawMessage(`{"uri":"file:///x"}`)}
	tests := []struct {
		name   string
		method string
		in     *jsonrpc.Error
		code   int
	}{
		{"not found", "resources/read", notFound, -32002},
		{"the gateway's hidden resource", "resources/read", &jsonrpc.Error{Code: -32602, Message: "Invalid params: unknown resource"}, -32002},
		{"data names the uri", "resources/read", &jsonrpc.Error{Code: -32602, Message: "no such thing", Data: json.RawMessage(`{"uri":"a:b"}`)}, -32002},
		{"other invalid params", "resources/read", &jsonrpc.Error{Code: -32602, Message: "Invalid params: uri must be a string"}, -32602},
		{"bad data", "resources/read", &jsonrpc.Error{Code: -32602, Message: "x", Data: json.RawMessage(`{"uri":1,"uri":2}`)}, -32602},
		{"other method", "tools/call", notFound, -32602},
		{"other code", "resources/read", &jsonrpc.Error{Code: -32603, Message: "Resource not found"}, -32603},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := *tt.in
			got := LegacyClientError(tt.method, tt.in)
			if got.Code != tt.code || got.Message != tt.in.Message || string(got.Data) != string(tt.in.Data) {
				t.Fatalf("got %+v, want code %d", got, tt.code)
			}
			if tt.in.Code != before.Code {
				t.Fatal("the error passed in was modified")
			}
		})
	}
	if LegacyClientError("resources/read", nil) != nil {
		t.Fatal("nil error")
	}
}

// TestToLegacyClientResultServerInfo: the gateway's serverInfo replaces a backend's in _meta, or
// gives a result without _meta one, while every other _meta member stays.
func TestToLegacyClientResultServerInfo(t *testing.T) {
	info := []byte(`{"name":"mcp-gateway","version":"1"}`)
	for _, tt := range []struct{ in, want string }{
		{`{"content":[],"resultType":"complete"}`, `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-gateway","version":"1"}}}`},
		{`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"be"},"k":1}}`, `{"content":[],"_meta":{"k":1,"io.modelcontextprotocol/serverInfo":{"name":"mcp-gateway","version":"1"}}}`},
		{`{"content":[],"_meta":{}}`, `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-gateway","version":"1"}}}`},
	} {
		got, err := ToLegacyClientResult("tools/call", "2025-11-25", []byte(tt.in), info)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s:\n got %s %v\nwant %s", tt.in, got, err, tt.want)
		}
	}
}
