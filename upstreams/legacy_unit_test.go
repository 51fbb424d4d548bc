package upstreams

import (
	"encoding/json"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

func TestClassifyProbe(t *testing.T) {
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
	modern, legacy := verdict{era: eraModern}, verdict{era: eraLegacy}
	named := func(v verdict) verdict { v.named = true; return v }
	candidate := verdict{candidate: true}
	tests := []struct {
		name   string
		status int
		m      *jsonrpc.Message
		err    error
		want   verdict
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
		{"404 plain", 404, nil, errTooLarge, candidate},
		{"405 plain", 405, nil, errTooLarge, candidate},
		{"400 plain", 400, nil, errTooLarge, candidate},
		{"401 plain", 401, nil, errTooLarge, verdict{}},
		{"500 plain", 500, nil, errTooLarge, verdict{}},
		{"502 plain", 502, nil, errTooLarge, verdict{}},
		{"error with 200", 200, errBody("-32603"), nil, modern},
		{"error with 500", 500, errBody("-32603"), nil, verdict{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classifyProbe(tt.status, tt.m, tt.err); got != tt.want {
				t.Fatalf("classifyProbe = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTranslateLegacy(t *testing.T) {
	tests := []struct{ method, in, want string }{
		{MethodToolsCall, `{"content":[]}`, `{"content":[],"resultType":"complete"}`},
		{MethodToolsCall, `{}`, `{"resultType":"complete"}`},
		{MethodToolsList, `{"tools":[],"ttlMs":60000,"cacheScope":"public"}`, `{"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}`},
		{MethodResourcesRead, `{"contents":[]}`, `{"contents":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}`},
		{MethodPromptsGet, `{"resultType":"complete","messages":[]}`, `{"resultType":"complete","messages":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.in, func(t *testing.T) {
			m := translateLegacy(tt.method, &jsonrpc.Message{Result: json.RawMessage(tt.in)})
			if string(m.Result) != tt.want {
				t.Fatalf("got %s, want %s", m.Result, tt.want)
			}
		})
	}
	m := translateLegacy(MethodResourcesRead, &jsonrpc.Message{Error: &jsonrpc.Error{Code: -32002, Message: "Resource not found"}})
	if m.Error.Code != jsonrpc.CodeInvalidParams || m.Error.Message != "Resource not found" {
		t.Fatalf("-32002 became %+v", m.Error)
	}
}

func TestParseLegacyRequest(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c"},"io.modelcontextprotocol/logLevel":"info",` +
		`"progressToken":1,"traceparent":"t","vendor.example/x":true},"name":"echo","arguments":{"a":"b"},` +
		`"requestState":"s","inputResponses":{}}}`
	lr, err := parseLegacyRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"progressToken":1,"traceparent":"t","vendor.example/x":true},"name":"echo","arguments":{"a":"b"}}`
	if lr.method != MethodToolsCall || string(lr.params) != want || !lr.logs {
		t.Fatalf("got %s %s logs=%v, want %s", lr.method, lr.params, lr.logs, want)
	}
	lr, _ = parseLegacyRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	if string(lr.params) != `{}` {
		t.Fatalf("an all-modern _meta should vanish: %s", lr.params)
	}
}

func TestProtocolConfig(t *testing.T) {
	for _, p := range []string{"", "auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "latest"} {
		cfg := Config{Upstreams: []UpstreamConfig{{Name: "a", URL: "http://127.0.0.1:1/mcp", Protocol: p}}}
		err := cfg.Validate()
		valid := p != "2024-11-05" && p != "latest"
		if (err == nil) != valid {
			t.Errorf("protocol %q: Validate = %v, want valid=%v", p, err, valid)
		}
	}
	if s := newLegacyState("2025-06-18", "gw/1", nil); s.known() != eraLegacy || s.offer != "2025-06-18" {
		t.Errorf("pinned legacy: era %v offer %s", s.known(), s.offer)
	}
	if s := newLegacyState("2026-07-28", "gw/1", nil); s.known() != eraModern {
		t.Error("pinned modern is not modern")
	}
}
