package names

import (
	"encoding/json"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

func TestRewriteParamsByteFaithful(t *testing.T) {
	tests := []struct {
		name, method, in, want string
		target                 Target
	}{
		{"tools/call keeps everything else", wire.MethodToolsCall,
			`{ "_meta" : {"progressToken":1, "x":"\u00e9"}, "name":"gh__create", "arguments":{"n":1.50,"s":"a\"b"},"requestState":"st","inputResponses":{"k":{"action":"accept"}} }`,
			`{ "_meta" : {"progressToken":1, "x":"\u00e9"}, "name":"create", "arguments":{"n":1.50,"s":"a\"b"},"requestState":"st","inputResponses":{"k":{"action":"accept"}} }`,
			Target{"gh", "create"}},
		{"name is rewritten, not nested names", wire.MethodPromptsGet,
			`{"arguments":{"name":"keep"},"name":"gh__p"}`, `{"arguments":{"name":"keep"},"name":"p"}`, Target{"gh", "p"}},
		{"resources/read", wire.MethodResourcesRead, `{"uri":"fs+file:///a","_meta":{}}`, `{"uri":"file:///a","_meta":{}}`, Target{"fs", "file:///a"}},
		{"completion ref/prompt", wire.MethodComplete,
			`{"ref":{"type":"ref/prompt","name":"gh__p"},"argument":{"name":"n","value":"v"}}`,
			`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"n","value":"v"}}`, Target{"gh", "p"}},
		{"completion ref/resource", wire.MethodComplete,
			`{"ref":{"type":"ref/resource","uri":"fs+mem://{id}"},"argument":{"name":"id","value":""}}`,
			`{"ref":{"type":"ref/resource","uri":"mem://{id}"},"argument":{"name":"id","value":""}}`, Target{"fs", "mem://{id}"}},
		{"escaping of the new name", wire.MethodToolsCall, `{"name":"x"}`, `{"name":"a\"b\\c\u0001ü"}`, Target{"gh", "a\"b\\c\x01ü"}},
		{"other methods untouched", "tools/list", `{"name":"x"}`, `{"name":"x"}`, Target{"gh", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := jsonrpc.Scan([]byte(tt.in), jsonrpc.Limits{}); err != nil {
				t.Fatalf("bad test input: %v", err)
			}
			got, err := RewriteParams(nil, []byte(tt.in), tt.method, tt.target)
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
			if !json.Valid(got) {
				t.Fatalf("output is not valid JSON: %s", got)
			}
		})
	}
}

func TestRewriteResultURIs(t *testing.T) {
	rw := Rewriter{Space: New("__", false, []string{"fs"}), Upstream: "fs"}
	tests := []struct {
		name, method, in, want string
	}{
		{"resources/read", wire.MethodResourcesRead,
			`{"contents":[{"uri":"file:///a","text":"t"},{"blob":"AA==","uri":"file:///b"}],"ttlMs":5}`,
			`{"contents":[{"uri":"fs+file:///a","text":"t"},{"blob":"AA==","uri":"fs+file:///b"}],"ttlMs":5}`},
		{"prompt embedded resource", wire.MethodPromptsGet,
			`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"mem://x","text":"t"}}},{"role":"user","content":{"type":"text","text":"\"uri\""}}]}`,
			`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"fs+mem://x","text":"t"}}},{"role":"user","content":{"type":"text","text":"\"uri\""}}]}`},
		{"structuredContent untouched", wire.MethodToolsCall,
			`{"content":[{"type":"resource_link","uri":"a:b","name":"n"}],"structuredContent":{"uri":"keep"}}`,
			`{"content":[{"type":"resource_link","uri":"fs+a:b","name":"n"}],"structuredContent":{"uri":"keep"}}`},
		{"nothing to do", wire.MethodToolsCall, `{"content":[{"type":"text","text":"x"}]}`, `{"content":[{"type":"text","text":"x"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resultFromBytes(rw, tt.method, []byte(tt.in))
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}

func FuzzRewriteParams(f *testing.F) {
	f.Add([]byte(`{"name":"a__b","ref":{"name":"x","uri":"y"},"uri":"z"}`), "new")
	f.Fuzz(func(t *testing.T, params []byte, name string) {
		if jsonrpc.Scan(params, jsonrpc.Limits{}) != nil || len(params) == 0 || params[0] != '{' {
			return
		}
		for _, m := range []string{wire.MethodToolsCall, wire.MethodResourcesRead, wire.MethodComplete} {
			out, err := RewriteParams(nil, params, m, Target{"u", name})
			if err != nil {
				continue
			}
			if jsonrpc.Scan(out, jsonrpc.Limits{}) != nil && jsonrpc.Scan([]byte(`{"n":`+string(jsonrpc.AppendString(nil, name))+`}`), jsonrpc.Limits{}) == nil {
				t.Fatalf("rewriting %s of %s with %q gave invalid JSON %s", m, params, name, out)
			}
		}
	})
}

// resultFromBytes runs a result through Rewriter.resultOf as Stream.render does: inside a
// response decoded (and scanned) by jsonrpc.DecodeMessage.
func resultFromBytes(u Rewriter, method string, res []byte) ([]byte, error) {
	body := append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":`), res...), '}')
	m, err := jsonrpc.DecodeMessage(body, jsonrpc.Limits{})
	if err != nil {
		return nil, err
	}
	return u.Result(method, m)
}
