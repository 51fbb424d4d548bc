package era

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

func TestClassify(t *testing.T) {
	msg := func(s string) *jsonrpc.Message {
		m, err := jsonrpc.DecodeMessage([]byte(s), jsonrpc.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return m
	}
	errBody := func(code string) *jsonrpc.Message {
		return msg(`{"jsonrpc":"2.0","id":1,"error":{"code":` + code + `,"message":"x"}}`)
	}
	unreadable := errors.New("body is not JSON")
	modern, legacy := Verdict{Era: Modern}, Verdict{Era: Legacy}
	named := func(v Verdict) Verdict { v.Named = true; return v }
	candidate := Verdict{Candidate: true}
	tests := []struct {
		name   string
		status int
		m      *jsonrpc.Message
		err    error
		want   Verdict
	}{
		{"modern discover", 200, msg(`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`), nil, named(modern)},
		{"legacy versions only", 200, msg(`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25"]}}`), nil, named(legacy)},
		{"some other result", 200, msg(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil, modern},
		{"-32022 without 2026", 400, msg(`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":["2025-11-25"]}}}`), nil, named(legacy)},
		{"-32022 naming 2026", 400, msg(`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":["2026-07-28"]}}}`), nil, modern},
		{"-32022 without data", 400, errBody("-32022"), nil, modern},
		{"modern header mismatch", 400, errBody("-32020"), nil, modern},
		// A bare status, or one with a non-2026 error, is only a candidate: a proxy or a
		// backend in trouble answers the same; a legacy handshake must confirm it.
		{"TS not initialized", 400, errBody("-32000"), nil, candidate},
		{"404 plain", 404, nil, unreadable, candidate},
		{"405 plain", 405, nil, unreadable, candidate},
		{"400 plain", 400, nil, unreadable, candidate},
		{"401 plain", 401, nil, unreadable, Verdict{}},
		{"500 plain", 500, nil, unreadable, Verdict{}},
		{"502 plain", 502, nil, unreadable, Verdict{}},
		{"error with 200", 200, errBody("-32603"), nil, modern},
		{"error with 500", 500, errBody("-32603"), nil, Verdict{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.status, tt.m, tt.err); got != tt.want {
				t.Fatalf("Classify = %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := Named(msg(`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-06-18"]}}`)); got != Legacy {
		t.Errorf("Named(legacy DiscoverResult) = %v, want Legacy", got)
	}
	if got := Named(msg(`{"jsonrpc":"2.0","id":1,"result":{}}`)); got != Unknown {
		t.Errorf("Named(a result naming no versions) = %v, want Unknown", got)
	}
}

func TestToModernResult(t *testing.T) {
	tests := []struct{ method, in, want string }{
		{"tools/call", `{"content":[]}`, `{"content":[],"resultType":"complete"}`},
		{"tools/call", `{}`, `{"resultType":"complete"}`},
		{"tools/call", `{"content":[],"ttlMs":5}`, `{"content":[],"ttlMs":5,"resultType":"complete"}`},
		{"tools/list", `{"tools":[],"ttlMs":60000,"cacheScope":"public"}`, `{"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}`},
		{"resources/read", `{"contents":[]}`, `{"contents":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}`},
		{"prompts/get", `{"resultType":"complete","messages":[]}`, `{"resultType":"complete","messages":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.in, func(t *testing.T) {
			m := ToModernResult(tt.method, &jsonrpc.Message{Result: json.RawMessage(tt.in)})
			if string(m.Result) != tt.want {
				t.Fatalf("got %s, want %s", m.Result, tt.want)
			}
		})
	}
	m := ToModernResult("resources/read", &jsonrpc.Message{Error: &jsonrpc.Error{Code: -32002, Message: "Resource not found"}})
	if m.Error.Code != jsonrpc.CodeInvalidParams || m.Error.Message != "Resource not found" {
		t.Fatalf("-32002 became %+v", m.Error)
	}
	other := &jsonrpc.Error{Code: -32603, Message: "x"}
	if m := ToModernResult("tools/call", &jsonrpc.Message{Error: other}); m.Error != other {
		t.Fatalf("another error was changed: %+v", m.Error)
	}
}

// TestToLegacyResult: the reverse of ToModernResult, for a pre-2026 client.
func TestToLegacyResult(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}`, `{"tools":[]}`},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}},"content":[],"resultType":"complete"}`,
			`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}},"content":[]}`},
		{`{}`, `{}`},
	}
	for _, tt := range tests {
		got, err := ToLegacyResult([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("ToLegacyResult(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	// Round trip: a legacy result made modern and back is the legacy result.
	for _, method := range []string{"tools/list", "tools/call", "resources/read"} {
		in := `{"contents":[{"uri":"a:b","text":"é\u0001"}]}`
		m := ToModernResult(method, &jsonrpc.Message{Result: json.RawMessage(in)})
		back, err := ToLegacyResult(m.Result)
		if err != nil || string(back) != `{"contents":[{"uri":"a:b","text":"é\u0001"}]}` {
			t.Errorf("%s: round trip gave %s, %v", method, back, err)
		}
	}
	if _, err := ToLegacyResult([]byte(`[1]`)); err == nil {
		t.Error("a result that is not an object was accepted")
	}
}

func TestToLegacyRequest(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c"},"io.modelcontextprotocol/logLevel":"info",` +
		`"progressToken":1,"traceparent":"t","vendor.example/x":true},"name":"echo","arguments":{"a":"b"},` +
		`"requestState":"s","inputResponses":{}}}`
	lr, err := ToLegacyRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"progressToken":1,"traceparent":"t","vendor.example/x":true},"name":"echo","arguments":{"a":"b"}}`
	if lr.Method != "tools/call" || string(lr.Params) != want || !lr.Logs {
		t.Fatalf("got %s %s logs=%v, want %s", lr.Method, lr.Params, lr.Logs, want)
	}
	lr, _ = ToLegacyRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	if string(lr.Params) != `{}` || lr.Logs {
		t.Fatalf("an all-modern _meta should vanish: %s logs=%v", lr.Params, lr.Logs)
	}
	lr, _ = ToLegacyRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if lr.Method != "ping" || lr.Params != nil {
		t.Fatalf("a request without params: %s %s", lr.Method, lr.Params)
	}
}

func TestIsClientRequest(t *testing.T) {
	for m, want := range map[string]bool{"elicitation/create": true, "sampling/createMessage": true, "roots/list": true,
		"ping": false, "tools/call": false} {
		if IsClientRequest(m) != want {
			t.Errorf("IsClientRequest(%q) != %v", m, want)
		}
	}
}

func TestInitializeParams(t *testing.T) {
	info := json.RawMessage(`{"name":"mcp-gateway","version":"1.4.0"}`)
	got, err := InitializeParams(V20251125, json.RawMessage(`{}`), info)
	if err != nil {
		t.Fatal(err)
	}
	// The bytes the bridge has always sent: members in this order, compact.
	want := `{"capabilities":{},"clientInfo":{"name":"mcp-gateway","version":"1.4.0"},"protocolVersion":"2025-11-25"}`
	if string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	old, _ := json.Marshal(map[string]any{"protocolVersion": V20251125, "capabilities": struct{}{}, "clientInfo": info})
	if string(got) != string(old) {
		t.Fatalf("differs from the map-built params: %s vs %s", got, old)
	}
}

func TestIsLegacyVersion(t *testing.T) {
	for v, want := range map[string]bool{V20251125: true, V20250618: true, V20250326: true, V20260728: false, "2024-11-05": false, "": false} {
		if IsLegacyVersion(v) != want {
			t.Errorf("IsLegacyVersion(%q) != %v", v, want)
		}
	}
}

func TestToModernParams(t *testing.T) {
	m := Meta{ProtocolVersion: V20260728, ClientCapabilities: json.RawMessage(`{"elicitation":{"form":{}}}`),
		ClientInfo: json.RawMessage(`{"name":"c","version":"1"}`)}
	meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}`
	tests := []struct{ name, in, want string }{
		{"no params", ``, `{"_meta":{` + meta + `}}`},
		{"no _meta", `{"name":"echo","arguments":{}}`, `{"name":"echo","arguments":{},"_meta":{` + meta + `}}`},
		{"client _meta kept, its modern keys dropped",
			`{"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2099-01-01","traceparent":"t"},"name":"echo"}`,
			`{"_meta":{"progressToken":7,"traceparent":"t",` + meta + `},"name":"echo"}`},
		{"client's reserved keys dropped in every spelling",
			`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"IO.ModelContextProtocol/Protocol_Version":"2026-07-28",` +
				`"io.modelcontextprotocol/related-task":{"taskId":"t"},"progressToken":1}}`,
			`{"_meta":{"progressToken":1,` + meta + `}}`},
		{"empty _meta", `{"_meta":{}}`, `{"_meta":{` + meta + `}}`},
		{"_meta not an object", `{"_meta":null,"name":"echo"}`, `{"_meta":{` + meta + `},"name":"echo"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToModernParams(json.RawMessage(tt.in), m)
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON: %s", got)
			}
			// ToLegacyRequest undoes it: the modern keys go, the rest stays.
			lr, err := ToLegacyRequest(append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`), got...), '}'))
			if err != nil || bytes.Contains(lr.Params, []byte("io.modelcontextprotocol/")) {
				t.Fatalf("round trip: %s, %v", lr.Params, err)
			}
		})
	}
	got, _ := ToModernParams(json.RawMessage(`{}`), Meta{ProtocolVersion: V20260728})
	if string(got) != `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}` {
		t.Fatalf("empty fields are left out: %s", got)
	}
	if _, err := ToModernParams(json.RawMessage(`[1]`), m); err == nil {
		t.Fatal("params that are not an object were accepted")
	}
}
