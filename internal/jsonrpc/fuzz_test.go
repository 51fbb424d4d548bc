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
			}
		}
	})
}
