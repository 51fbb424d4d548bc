package jsonrpc

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecode checks that Decode never panics, always answers with a JSON-RPC *Error on failure,
// and that whatever it accepts is valid JSON that encoding/json also accepts.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","method":"n"}`,
		`[{"jsonrpc":"2.0"}]`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","arguments":{"k":[1,2,{"z":null}]}}}`,
		`{"a":"\u0061","a":1}`,
		"{\"s\":\"\xff\"}",
		`{"n":-0.5e+10}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","NAME":"b"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","ARGUMENTS":{"k":1}}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"a\",\"ur\u0131\":\"b\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\",\"arguments\":{\"k\":1,\"\u212a\":2}}}",
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"a","Name":"b"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"argument":{"NAME":"a"},"context":{"arguments":{"b":"c"}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"argument":{"name":null},"context":{"arguments":null}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := Decode(data, Limits{MaxDepth: 32})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a *jsonrpc.Error", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Decode accepted invalid JSON %q", data)
		}
		if req.Params != nil {
			if p, err := ParseParams(req.Params); err == nil {
				_, _ = ParseMeta(p.Meta)
				agreeWithEncodingJSON(t, req.Params, p)
			}
		}
	})
}

// agreeWithEncodingJSON checks the property the case-variant checks exist for: whatever params
// the gateway accepts, a backend decoding them with encoding/json into a struct (which matches
// member names case-insensitively) reads the same name, URI, arguments and state.
func agreeWithEncodingJSON(t *testing.T, raw json.RawMessage, p *Params) {
	var be struct {
		Name         *string         `json:"name"`
		URI          *string         `json:"uri"`
		Arguments    json.RawMessage `json:"arguments"`
		RequestState *string         `json:"requestState"`
		Ref          *struct {
			Name *string `json:"name"`
			URI  *string `json:"uri"`
		} `json:"ref"`
	}
	if json.Unmarshal(raw, &be) != nil {
		return // a type the backend would refuse too
	}
	if (be.Name != nil) != p.HasName || (p.HasName && *be.Name != p.Name) {
		t.Fatalf("name: backend reads %v, gateway %q (present %v)", be.Name, p.Name, p.HasName)
	}
	if (be.URI != nil) != p.HasURI || (p.HasURI && *be.URI != p.URI) {
		t.Fatalf("uri: backend reads %v, gateway %q", be.URI, p.URI)
	}
	if string(be.Arguments) != "null" && string(be.Arguments) != string(p.Arguments) {
		t.Fatalf("arguments: backend reads %s, gateway %s", be.Arguments, p.Arguments)
	}
	if (be.RequestState != nil) != p.HasState {
		t.Fatalf("requestState: backend reads %v, gateway present %v", be.RequestState, p.HasState)
	}
	if be.Ref != nil && p.Ref != nil {
		ref, err := ParseRef(p.Ref)
		if err != nil {
			return
		}
		if (be.Ref.Name != nil && *be.Ref.Name != ref.Name) || (be.Ref.URI != nil && *be.Ref.URI != ref.URI) {
			t.Fatalf("ref: backend reads %v/%v, gateway %q/%q", be.Ref.Name, be.Ref.URI, ref.Name, ref.URI)
		}
	}
	agreeOnCompletion(t, raw)
}

// agreeOnCompletion is agreeWithEncodingJSON for what the gateway reads of a completion besides
// its ref: the variable completed and the context, by exact member names as the gateway reads
// them, once CheckCompletion has let them through.
func agreeOnCompletion(t *testing.T, raw json.RawMessage) {
	if CheckCompletion(raw) != nil {
		return
	}
	var be struct {
		Argument *struct {
			Name *string `json:"name"`
		} `json:"argument"`
		Context *struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"context"`
	}
	if json.Unmarshal(raw, &be) != nil {
		return
	}
	var name, args json.RawMessage
	_ = Members(raw, func(k, v []byte) error {
		inner := map[string]*json.RawMessage{"argument": &name, "context": &args}[string(k)]
		if inner == nil || v[0] != '{' {
			return nil
		}
		want := map[string]string{"argument": "name", "context": "arguments"}[string(k)]
		return Members(v, func(ik, iv []byte) error {
			if string(ik) == want {
				*inner = iv
			}
			return nil
		})
	})
	var gwName *string
	if name != nil && name[0] == '"' {
		var s string
		if json.Unmarshal(name, &s) == nil {
			gwName = &s
		}
	}
	if be.Argument != nil && (be.Argument.Name == nil) != (gwName == nil) ||
		be.Argument != nil && be.Argument.Name != nil && gwName != nil && *be.Argument.Name != *gwName {
		t.Fatalf("argument.name: backend reads %v, gateway %v", be.Argument.Name, gwName)
	}
	if be.Context != nil && string(be.Context.Arguments) != string(args) && !(args == nil && string(be.Context.Arguments) == "null") {
		t.Fatalf("context.arguments: backend reads %s, gateway %s", be.Context.Arguments, args)
	}
}
