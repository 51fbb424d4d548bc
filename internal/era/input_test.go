package era

import (
	"encoding/json"
	"testing"
)

func TestInputRequests(t *testing.T) {
	form := `{"method":"elicitation/create","params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`
	url := `{"method":"elicitation/create","params":{"mode":"url","message":"Log in","url":"https://example.com/login"}}`
	sampling := `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":20,` +
		`"_meta":{"io.modelcontextprotocol/clientInfo":{},"vendor.example/x":1}}}`
	in := `{"z_roots":{"method":"roots/list"},"b_form":` + form + `,"a_url":` + url + `,"sum":` + sampling + `}`
	type want struct{ key, method, params, capability string }
	tests := []struct {
		version string
		want    []want
	}{
		{V20251125, []want{
			{"a_url", "elicitation/create", `{"mode":"url","message":"Log in","url":"https://example.com/login","elicitationId":"a_url"}`, CapElicitationURL},
			{"b_form", "elicitation/create", `{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`, CapElicitationForm},
			{"sum", "sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":20,"_meta":{"vendor.example/x":1}}`, CapSampling},
			{"z_roots", "roots/list", `{}`, CapRoots},
		}},
		{V20250618, []want{
			// The URL entry still needs elicitation.url, which no 2025-06-18 session declares.
			{"a_url", "elicitation/create", `{"mode":"url","message":"Log in","url":"https://example.com/login","elicitationId":"a_url"}`, CapElicitationURL},
			{"b_form", "elicitation/create", `{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`, CapElicitationForm},
			{"sum", "sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":20,"_meta":{"vendor.example/x":1}}`, CapSampling},
			{"z_roots", "roots/list", `{}`, CapRoots},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			got, err := InputRequests(tt.version, json.RawMessage(in))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d entries, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Key != w.key || g.Method != w.method || string(g.Params) != w.params || g.Capability != w.capability {
					t.Errorf("entry %d = {%s %s %s %s}\nwant {%s %s %s %s}", i, g.Key, g.Method, g.Params, g.Capability,
						w.key, w.method, w.params, w.capability)
				}
				if !json.Valid(g.Params) {
					t.Errorf("entry %d: invalid params %s", i, g.Params)
				}
			}
		})
	}

	one := func(entry string) (InputRequest, error) {
		got, err := InputRequests(V20251125, json.RawMessage(`{"k":`+entry+`}`))
		if err != nil {
			return InputRequest{}, err
		}
		return got[0], nil
	}
	capTests := []struct{ entry, capability, params string }{
		{`{"method":"elicitation/create","params":{"message":"m","requestedSchema":{}}}`, CapElicitationForm, `{"message":"m","requestedSchema":{}}`},
		{`{"method":"elicitation/create","params":{"mode":"url","url":"https://u.example","message":"m","elicitationId":"e1"}}`, CapElicitationURL,
			`{"mode":"url","url":"https://u.example","message":"m","elicitationId":"e1"}`},
		{`{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"tools":[]}}`, CapSamplingTools, ``},
		{`{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"toolChoice":{"mode":"auto"}}}`, CapSamplingTools, ``},
		{`{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"tools":null,"toolChoice":{"mode":"none"}}}`, CapSamplingTools, ``},
		{`{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"toolChoice":null}}`, CapSampling, ``},
		{`{"method":"sampling/createMessage","params":{"includeContext":"thisServer","tools":[],"messages":[],"maxTokens":1}}`, CapSamplingToolsContext, ``},
		{`{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"includeContext":"allServers"}}`, CapSamplingContext, ``},
		{`{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"includeContext":"none","tools":null}}`, CapSampling, ``},
		{`{"method":"roots/list","params":null}`, CapRoots, `{}`},
		{`{"method":"roots/list","params":{"_meta":{"IO.ModelContextProtocol/protocol_version":"x"}}}`, CapRoots, `{}`},
		{`{"params":{},"method":"roots/list","extra":1}`, CapRoots, `{}`},
	}
	for _, tt := range capTests {
		got, err := one(tt.entry)
		if err != nil || got.Capability != tt.capability || (tt.params != "" && string(got.Params) != tt.params) {
			t.Errorf("%s: got %+v (params %s), %v; want %s %s", tt.entry, got, got.Params, err, tt.capability, tt.params)
		}
	}

	bad := []struct{ version, in string }{
		{V20251125, `[]`},
		{V20251125, `null`},
		{V20251125, `{"k":1}`},
		{V20251125, `{"k":{"method":"tools/call","params":{}}}`},
		{V20251125, `{"k":{"method":"ping"}}`},
		{V20251125, `{"k":{"method":7,"params":{}}}`},
		{V20251125, `{"k":{"params":{}}}`},
		{V20251125, `{"k":{"method":"elicitation/create"}}`},
		{V20251125, `{"k":{"method":"sampling/createMessage","params":[1]}}`},
		{V20251125, `{"k":{"method":"elicitation/create","params":{"mode":"telepathy","message":"m"}}}`},
		{V20251125, `{"k":{"method":"elicitation/create","params":{"mode":1,"message":"m"}}}`},
		// A URL-mode elicitation's url is a web page without user information.
		{V20251125, `{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m"}}}`},
		{V20251125, `{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":["https://example.com"]}}}`},
		{V20251125, `{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"javascript:alert(1)"}}}`},
		{V20250618, `{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"data:text/html,x"}}}`},
		{V20251125, `{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://a:b@example.com"}}}`},
		{V20251125, `{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://example.com\\@evil.test"}}}`},
		{V20251125, `{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https:\u002f\u002fevil.test\u0000"}}}`},
		{V20251125, `{"k":{"method":"roots/list"},"k":{"method":"roots/list"}}`},
		{V20251125, `{"k":{"method":"roots/list"}`},
		{V20260728, `{"k":{"method":"roots/list"}}`},
	}
	for _, tt := range bad {
		if got, err := InputRequests(tt.version, json.RawMessage(tt.in)); err == nil {
			t.Errorf("InputRequests(%s, %s) = %+v, want an error", tt.version, tt.in, got)
		}
	}
	if got, err := InputRequests(V20251125, json.RawMessage(`{}`)); err != nil || len(got) != 0 {
		t.Errorf("empty inputRequests: %+v, %v", got, err)
	}
}

func TestInputResponse(t *testing.T) {
	form := InputRequest{Key: "k", Method: MethodElicitationCreate, Capability: CapElicitationForm}
	url := InputRequest{Key: "k", Method: MethodElicitationCreate, Capability: CapElicitationURL}
	sampling := InputRequest{Key: "s", Method: MethodSamplingCreate, Capability: CapSampling}
	roots := InputRequest{Key: "r", Method: MethodRootsList, Capability: CapRoots}
	tests := []struct {
		name      string
		req       InputRequest
		in, want  string
		wantError bool
	}{
		{"accept", form, `{"action":"accept","content":{"name":"octocat"}}`, `{"action":"accept","content":{"name":"octocat"}}`, false},
		{"decline with protocol meta", form,
			`{"action":"decline","resultType":"complete","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","x":1}}`,
			`{"action":"decline","_meta":{"x":1}}`, false},
		{"cancel, meta emptied", form, `{"_meta":{"io.modelcontextprotocol/clientInfo":{}},"action":"cancel"}`, `{"action":"cancel"}`, false},
		{"url mode drops content", url, `{"action":"accept","content":{"a":1}}`, `{"action":"accept"}`, false},
		{"sampling", sampling, `{"role":"assistant","content":{"type":"text","text":"…"},"model":"m1","stopReason":"endTurn"}`,
			`{"role":"assistant","content":{"type":"text","text":"…"},"model":"m1","stopReason":"endTurn"}`, false},
		{"sampling content array (2025-11-25 tools)", sampling, `{"role":"assistant","content":[{"type":"text","text":"x"}],"model":"m"}`,
			`{"role":"assistant","content":[{"type":"text","text":"x"}],"model":"m"}`, false},
		{"roots", roots, `{"roots":[{"uri":"file:///work"}]}`, `{"roots":[{"uri":"file:///work"}]}`, false},
		{"bad action", form, `{"action":"maybe"}`, ``, true},
		{"no action", form, `{"content":{}}`, ``, true},
		{"action not a string", form, `{"action":true}`, ``, true},
		{"sampling without model", sampling, `{"role":"assistant","content":{}}`, ``, true},
		{"sampling null content", sampling, `{"role":"assistant","content":null,"model":"m"}`, ``, true},
		{"sampling role not a string", sampling, `{"role":1,"content":{},"model":"m"}`, ``, true},
		{"roots not an array", roots, `{"roots":{}}`, ``, true},
		{"no roots", roots, `{}`, ``, true},
		{"not an object", roots, `[]`, ``, true},
		{"not JSON", form, `{"action":`, ``, true},
		{"empty", form, ``, ``, true},
		{"duplicate keys", form, `{"action":"decline","action":"accept"}`, ``, true},
		{"unknown method", InputRequest{Method: "tools/call"}, `{}`, ``, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InputResponse(tt.req, json.RawMessage(tt.in))
			if tt.wantError {
				if err == nil {
					t.Fatalf("got %s, want an error", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// TestIsProtocolMetaKey: the reserved namespace in every spelling a decoder reads as it.
func TestIsProtocolMetaKey(t *testing.T) {
	for k, want := range map[string]bool{
		"io.modelcontextprotocol/protocolVersion":  true,
		"io.modelcontextprotocol/related-task":     true,
		"IO.ModelContextProtocol/ProtocolVersion":  true,
		"io.model_context-protocol/x":              true,
		"io.modelcontextprotocol/":                 true,
		"progressToken":                            false,
		"traceparent":                              false,
		"io.mcp-gateway/confirm":                   false,
		"vendor.example/io.modelcontextprotocol/x": false,
	} {
		if got := IsProtocolMetaKey(k); got != want {
			t.Errorf("IsProtocolMetaKey(%q) = %v, want %v", k, got, want)
		}
	}
}

// TestInputRequestsMemberSpelledOtherwise: a request whose params hold a member the gateway
// decides on (mode, url, elicitationId, tools, includeContext, _meta) spelled otherwise is
// refused, from a backend's inputRequests and from a pre-2026 backend's own request alike, alone
// or beside the exact spelling, for every client version: a client whose decoder folds case or
// punctuation would read "Mode":"url" as a URL-mode elicitation the gateway judged form mode,
// and "Tools" as a tool-enabled sampling request it judged plain sampling, neither needing what
// the client declared. The exact spellings still pass.
func TestInputRequestsMemberSpelledOtherwise(t *testing.T) {
	const (
		schema   = `"message":"Name?","requestedSchema":{"type":"object"}`
		messages = `"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5`
	)
	for _, tt := range []struct{ method, params string }{
		{MethodElicitationCreate, `{"Mode":"url","url":"https://example.com/x","elicitationId":"e",` + schema + `}`},
		{MethodElicitationCreate, `{"MODE":"url","url":"https://example.com/x",` + schema + `}`},
		{MethodElicitationCreate, `{"mode":"form","mo-de":"url","url":"https://example.com/x",` + schema + `}`},
		{MethodElicitationCreate, `{"mode":"form","mo_de":"url",` + schema + `}`},
		{MethodElicitationCreate, `{"ｍode":"url",` + schema + `}`}, // fullwidth m
		{MethodElicitationCreate, `{"mode":"url","URL":"https://example.com/other","url":"https://example.com/x",` + schema + `}`},
		{MethodElicitationCreate, `{"mode":"url","url":"https://example.com/x","ElicitationID":"e",` + schema + `}`},
		{MethodElicitationCreate, `{` + schema + `,"_META":{"io.modelcontextprotocol/x":1}}`},
		{MethodSamplingCreate, `{"Tools":[{"name":"t","inputSchema":{"type":"object"}}],` + messages + `}`},
		{MethodSamplingCreate, `{"tool_s":[{"name":"t","inputSchema":{"type":"object"}}],` + messages + `}`},
		{MethodSamplingCreate, `{"include_context":"allServers",` + messages + `}`},
		{MethodSamplingCreate, `{"includeContext":"none","IncludeContext":"thisServer",` + messages + `}`},
		{MethodSamplingCreate, `{"INCLUDECONTEXT":"thisServer",` + messages + `}`},
		{MethodRootsList, `{"_Meta":{"io.modelcontextprotocol/x":1}}`},
	} {
		for _, v := range []string{V20251125, V20250618, V20250326} {
			entry := `{"method":"` + tt.method + `","params":` + tt.params + `}`
			if got, err := InputRequests(v, json.RawMessage(`{"k":`+entry+`}`)); err == nil {
				t.Errorf("%s: inputRequests entry %s = %+v, want refused", v, tt.params, got)
			}
			if got, err := ServerRequest(v, "k", tt.method, json.RawMessage(tt.params)); err == nil {
				t.Errorf("%s: %s request %s = %+v, want refused", v, tt.method, tt.params, got)
			}
		}
	}
	for _, tt := range []struct{ method, params, capability string }{
		{MethodElicitationCreate, `{"mode":"url","url":"https://example.com/x","elicitationId":"e",` + schema + `}`, CapElicitationURL},
		{MethodSamplingCreate, `{"tools":[{"name":"t","inputSchema":{"type":"object"}}],` + messages + `}`, CapSamplingTools},
		{MethodSamplingCreate, `{"includeContext":"thisServer",` + messages + `,"_meta":{"k":1}}`, CapSamplingContext},
	} {
		got, err := ServerRequest(V20251125, "k", tt.method, json.RawMessage(tt.params))
		if err != nil || got.Capability != tt.capability {
			t.Errorf("%s: %+v %v, want capability %s", tt.params, got, err, tt.capability)
		}
	}
}
