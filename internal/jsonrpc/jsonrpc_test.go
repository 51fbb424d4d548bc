package jsonrpc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	tests := []struct {
		name     string
		body     string
		wantCode int // 0: success
		method   string
		id       string
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, 0, "tools/list", "1"},
		{"string id", `{"jsonrpc":"2.0","id":"a","method":"x"}`, 0, "x", `"a"`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, 0, "notifications/cancelled", ""},
		{"escaped method", `{"jsonrpc":"2.0","id":1,"method":"tools\/list"}`, 0, "tools/list", "1"},
		{"empty", ``, CodeParseError, "", ""},
		{"garbage", `{"jsonrpc":`, CodeParseError, "", ""},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"x"} x`, CodeParseError, "", ""},
		{"invalid utf8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", CodeParseError, "", ""},
		{"control char in string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\x01\"}", CodeParseError, "", ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"x"}]`, CodeInvalidRequest, "", ""},
		{"scalar", `42`, CodeInvalidRequest, "", ""},
		{"response posted", `{"jsonrpc":"2.0","id":1,"result":{}}`, CodeInvalidRequest, "", ""},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"x"}`, CodeInvalidRequest, "", ""},
		{"no version", `{"id":1,"method":"x"}`, CodeInvalidRequest, "", ""},
		{"no method", `{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, "", ""},
		{"case-sensitive member", `{"jsonrpc":"2.0","id":1,"Method":"x"}`, CodeInvalidRequest, "", ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"x"}`, CodeInvalidRequest, "", ""},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, CodeInvalidRequest, "", ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"x"}`, CodeInvalidRequest, "", ""},
		{"params array", `{"jsonrpc":"2.0","id":1,"method":"x","params":[]}`, CodeInvalidParams, "", ""},
		{"duplicate top key", `{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}`, CodeInvalidRequest, "", ""},
		{"duplicate params key", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":"a","name":"b"}}`, CodeInvalidParams, "", ""},
		{"duplicate escaped key", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":"a","n\u0061me":"b"}}`, CodeInvalidParams, "", ""},
		{"duplicate nested key", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"arguments":{"a":{"b":1,"b":2}}}}`, CodeInvalidParams, "", ""},
		{"too deep", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + deep + `}}`, CodeInvalidRequest, "", ""},
		{"bad number", `{"jsonrpc":"2.0","id":01,"method":"x"}`, CodeParseError, "", ""},
		{"bad escape", `{"jsonrpc":"2.0","id":1,"method":"\q"}`, CodeParseError, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := Decode([]byte(tt.body), Limits{})
			if tt.wantCode != 0 {
				var e *Error
				if !errors.As(err, &e) || e.Code != tt.wantCode {
					t.Fatalf("Decode error = %v, want code %d", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if req.Method != tt.method || string(req.ID) != tt.id {
				t.Fatalf("got method %q id %q, want %q %q", req.Method, req.ID, tt.method, tt.id)
			}
		})
	}
}

func TestDecodeManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"arguments":{`)
	for i := 0; i < 40; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
	}
	b.WriteString(`,"k":2}}}`) // "k" duplicates the first key after the switch to a map
	if _, err := Decode([]byte(b.String()), Limits{}); !errors.Is(err, NewError(CodeInvalidParams, "")) {
		t.Fatalf("duplicate among many keys: err = %v", err)
	}
}

func TestTokenLimit(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"` + strings.Repeat("a", 100) + `"}}`
	if _, err := Decode([]byte(body), Limits{MaxTokenBytes: 50}); !errors.Is(err, NewError(CodeInvalidRequest, "")) {
		t.Fatalf("long string: err = %v", err)
	}
	if _, err := Decode([]byte(body), Limits{}); err != nil {
		t.Fatalf("default limit: %v", err)
	}
}

func TestParseParamsAndMeta(t *testing.T) {
	raw := []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"progressToken":7,` +
		`"traceparent":"00-abc-def-01"},"name":"echo","arguments":{"a":1},"requestState":"s","cursor":""}`)
	p, err := ParseParams(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "echo" || !p.HasName || string(p.Arguments) != `{"a":1}` || p.RequestState != "s" || !p.HasCursor {
		t.Fatalf("params = %+v", p)
	}
	m, err := ParseMeta(p.Meta)
	if err != nil {
		t.Fatal(err)
	}
	if m.ProtocolVersion != "2026-07-28" || string(m.ClientCapabilities) != `{"elicitation":{}}` ||
		string(m.ProgressToken) != "7" || m.TraceParent != "00-abc-def-01" {
		t.Fatalf("meta = %+v", m)
	}
	if p, err := ParseParams([]byte(`{"name":"x","arguments":null}`)); err != nil || p.Arguments != nil {
		t.Errorf("arguments null: %v %s", err, p.Arguments)
	}
	bad := []string{`{"name":1}`, `{"_meta":[]}`, `{"arguments":"x"}`, `{"uri":null}`, `{"arguments":[]}`}
	for _, b := range bad {
		if _, err := ParseParams([]byte(b)); !errors.Is(err, NewError(CodeInvalidParams, "")) {
			t.Errorf("ParseParams(%s) err = %v, want -32602", b, err)
		}
	}
	if _, err := ParseMeta([]byte(`{"io.modelcontextprotocol/clientCapabilities":"x"}`)); err == nil {
		t.Error("string capabilities accepted")
	}
}

// TestMetaLogLevel: a request's _meta log level is one of the eight levels, spelled as MCP spells
// them; anything else (another case, a syslog name MCP does not use, not a string) is -32602
// naming the key, so no unknown level reaches a backend or leaves the call's log filter open.
func TestMetaLogLevel(t *testing.T) {
	for _, level := range []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"} {
		m, err := ParseMeta([]byte(`{"io.modelcontextprotocol/logLevel":"` + level + `"}`))
		if err != nil || m.LogLevel != level {
			t.Errorf("level %q: %v %+v", level, err, m)
		}
	}
	for _, bad := range []string{`""`, `"DEBUG"`, `"warn"`, `"fatal"`, `"info "`, `"\u0069nfo "`, `7`, `null`} {
		_, err := ParseMeta([]byte(`{"io.modelcontextprotocol/logLevel":` + bad + `}`))
		if !errors.Is(err, NewError(CodeInvalidParams, "")) || !strings.Contains(err.Error(), MetaLogLevel) {
			t.Errorf("level %s: err = %v, want -32602 naming %s", bad, err, MetaLogLevel)
		}
	}
}

// TestLogLevels: the one list of levels holds the eight syslog severities of RFC 5424 as MCP
// spells them, least severe first; each ranks at its position and is known, anything else (another
// case, a syslog name MCP does not use) is refused; a caller that changes its copy changes no one
// else's; and the text error messages name is the same list.
func TestLogLevels(t *testing.T) {
	want := [8]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
	levels := LogLevels()
	if levels != want {
		t.Fatalf("LogLevels() = %v, want %v", levels, want)
	}
	for i, l := range levels {
		if r, ok := LogLevelRank(l); !ok || r != i {
			t.Errorf("LogLevelRank(%q) = %d, %v, want %d, true", l, r, ok, i)
		}
		if !LogLevelKnown(l) {
			t.Errorf("LogLevelKnown(%q) = false", l)
		}
	}
	for _, bad := range []string{"", "DEBUG", "Info", "warn", "fatal", "info ", "emerg", "crit"} {
		if r, ok := LogLevelRank(bad); ok {
			t.Errorf("LogLevelRank(%q) = %d, accepted", bad, r)
		}
		if LogLevelKnown(bad) {
			t.Errorf("LogLevelKnown(%q) accepted", bad)
		}
	}
	levels[0] = "trace"
	if LogLevels() != want || LogLevelKnown("trace") || !LogLevelKnown("debug") {
		t.Error("changing a caller's copy of LogLevels changed the list")
	}
	if got := LogLevelsText(); got != strings.Join(want[:], ", ") {
		t.Errorf("LogLevelsText() = %q", got)
	}
}

func TestAppend(t *testing.T) {
	got := string(AppendError(nil, nil, NewError(CodeParseError, `bad "json"`)))
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad \"json\""}}`
	if got != want {
		t.Fatalf("AppendError = %s\nwant %s", got, want)
	}
	got = string(AppendResult(nil, []byte(`"x"`), []byte(`{}`)))
	if got != `{"jsonrpc":"2.0","id":"x","result":{}}` {
		t.Fatalf("AppendResult = %s", got)
	}
	e := NewError(CodeUnsupportedProtocolVersion, "Unsupported protocol version").
		WithData(map[string]any{"supported": []string{"2026-07-28"}, "requested": "1900-01-01"})
	got = string(AppendError(nil, []byte("1"), e))
	if !strings.Contains(got, `"data":{"requested":"1900-01-01","supported":["2026-07-28"]}`) {
		t.Fatalf("AppendError with data = %s", got)
	}
}

func TestDecodeMessage(t *testing.T) {
	good := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
	}
	for _, g := range good {
		if _, err := DecodeMessage([]byte(g), Limits{}); err != nil {
			t.Errorf("DecodeMessage(%s): %v", g, err)
		}
	}
	bad := []string{`garbage`, `{"id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"result":5}`, `[]`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`}
	for _, b := range bad {
		if _, err := DecodeMessage([]byte(b), Limits{}); !errors.Is(err, ErrBadMessage) {
			t.Errorf("DecodeMessage(%s) err = %v, want ErrBadMessage", b, err)
		}
	}
}

// TestDecodeMessageErrorObject: a backend's error is read as the SDKs' clients read it, an
// object with an integer code and a string message under their exact names, or it is no
// message: nothing else becomes an error the backend never sent.
func TestDecodeMessageErrorObject(t *testing.T) {
	for _, tt := range []struct {
		name, err string
		want      *Error // nil: ErrBadMessage
	}{
		{"whole", `{"code":-32602,"message":"x","data":{"a":1}}`, &Error{Code: -32602, Message: "x", Data: []byte(`{"a":1}`)}},
		{"unknown member kept out", `{"code":5,"message":"","extra":true}`, &Error{Code: 5}},
		{"escaped names", `{"c\u006fde":7,"message":"m\u00e9"}`, &Error{Code: 7, Message: "mé"}},
		{"null", `null`, nil},
		{"empty object", `{}`, nil},
		{"no message", `{"code":5}`, nil},
		{"no code", `{"message":"x"}`, nil},
		{"code null", `{"code":null,"message":"x"}`, nil},
		{"message null", `{"code":1,"message":null}`, nil},
		{"code a string", `{"code":"1","message":"x"}`, nil},
		{"code a fraction", `{"code":1.5,"message":"x"}`, nil},
		{"code in another case", `{"Code":-32601,"message":"x"}`, nil},
		{"message in another case", `{"code":1,"Message":"x"}`, nil},
		{"a string", `"boom"`, nil},
		{"an array", `[1]`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"error":`+tt.err+`}`), Limits{})
			if tt.want == nil {
				if !errors.Is(err, ErrBadMessage) {
					t.Fatalf("err = %v (message %+v), want ErrBadMessage", err, m)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e := m.Error; e.Code != tt.want.Code || e.Message != tt.want.Message || string(e.Data) != string(tt.want.Data) {
				t.Fatalf("read %+v, want %+v", e, tt.want)
			}
		})
	}
}

// TestAnswers: a response answers a request only under the same id; an error may carry a null
// or absent id (JSON-RPC 2.0 §5, the peer could not read it); a result may not.
func TestAnswers(t *testing.T) {
	for _, tt := range []struct {
		sent, msg string
		want      bool
	}{
		{`1`, `{"jsonrpc":"2.0","id":1,"result":{}}`, true},
		{`"a"`, `{"jsonrpc":"2.0","id":"\u0061","result":{}}`, true},
		{`9007199254740993`, `{"jsonrpc":"2.0","id":9007199254740992,"result":{}}`, true}, // a JavaScript peer rounds
		{`1`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, true},
		{`1`, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}`, true},
		{`1`, `{"jsonrpc":"2.0","id":2,"result":{}}`, false},
		{`1`, `{"jsonrpc":"2.0","id":"1","result":{}}`, false},
		{`"1"`, `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`, false},
		{`1`, `{"jsonrpc":"2.0","result":{}}`, false},
		{`1`, `{"jsonrpc":"2.0","id":null,"result":{}}`, false},
		{`"a"`, `{"jsonrpc":"2.0","id":"b","result":{}}`, false},
	} {
		m, err := DecodeMessage([]byte(tt.msg), Limits{})
		if err != nil {
			t.Fatalf("DecodeMessage(%s): %v", tt.msg, err)
		}
		if got := m.Answers(json.RawMessage(tt.sent)); got != tt.want {
			t.Errorf("%s answers id %s = %v, want %v", tt.msg, tt.sent, got, tt.want)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}},"name":"toolbox__echo","arguments":{"text":"hello"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		req, err := Decode(body, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		p, err := ParseParams(req.Params)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ParseMeta(p.Meta); err != nil {
			b.Fatal(err)
		}
	}
}
