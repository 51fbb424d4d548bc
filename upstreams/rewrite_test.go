package upstreams

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

func TestRewriteParamsByteFaithful(t *testing.T) {
	tests := []struct {
		name, method, in, want string
		target                 Target
	}{
		{"tools/call keeps everything else", MethodToolsCall,
			`{ "_meta" : {"progressToken":1, "x":"\u00e9"}, "name":"gh__create", "arguments":{"n":1.50,"s":"a\"b"},"requestState":"st","inputResponses":{"k":{"action":"accept"}} }`,
			`{ "_meta" : {"progressToken":1, "x":"\u00e9"}, "name":"create", "arguments":{"n":1.50,"s":"a\"b"},"requestState":"st","inputResponses":{"k":{"action":"accept"}} }`,
			Target{"gh", "create"}},
		{"name is rewritten, not nested names", MethodPromptsGet,
			`{"arguments":{"name":"keep"},"name":"gh__p"}`, `{"arguments":{"name":"keep"},"name":"p"}`, Target{"gh", "p"}},
		{"resources/read", MethodResourcesRead, `{"uri":"fs+file:///a","_meta":{}}`, `{"uri":"file:///a","_meta":{}}`, Target{"fs", "file:///a"}},
		{"completion ref/prompt", MethodComplete,
			`{"ref":{"type":"ref/prompt","name":"gh__p"},"argument":{"name":"n","value":"v"}}`,
			`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"n","value":"v"}}`, Target{"gh", "p"}},
		{"completion ref/resource", MethodComplete,
			`{"ref":{"type":"ref/resource","uri":"fs+mem://{id}"},"argument":{"name":"id","value":""}}`,
			`{"ref":{"type":"ref/resource","uri":"mem://{id}"},"argument":{"name":"id","value":""}}`, Target{"fs", "mem://{id}"}},
		{"escaping of the new name", MethodToolsCall, `{"name":"x"}`, `{"name":"a\"b\\c\u0001ü"}`, Target{"gh", "a\"b\\c\x01ü"}},
		{"other methods untouched", "tools/list", `{"name":"x"}`, `{"name":"x"}`, Target{"gh", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := jsonrpc.Scan([]byte(tt.in), jsonrpc.Limits{}); err != nil {
				t.Fatalf("bad test input: %v", err)
			}
			got, err := rewriteParams(nil, []byte(tt.in), tt.method, tt.target)
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
	rw := uriRewriter{ns: &namespace{sep: "__", known: map[string]bool{"fs": true}}, upstream: "fs"}
	tests := []struct {
		name, method, in, want string
	}{
		{"resources/read", MethodResourcesRead,
			`{"contents":[{"uri":"file:///a","text":"t"},{"blob":"AA==","uri":"file:///b"}],"ttlMs":5}`,
			`{"contents":[{"uri":"fs+file:///a","text":"t"},{"blob":"AA==","uri":"fs+file:///b"}],"ttlMs":5}`},
		{"prompt embedded resource", MethodPromptsGet,
			`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"mem://x","text":"t"}}},{"role":"user","content":{"type":"text","text":"\"uri\""}}]}`,
			`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"fs+mem://x","text":"t"}}},{"role":"user","content":{"type":"text","text":"\"uri\""}}]}`},
		{"structuredContent untouched", MethodToolsCall,
			`{"content":[{"type":"resource_link","uri":"a:b","name":"n"}],"structuredContent":{"uri":"keep"}}`,
			`{"content":[{"type":"resource_link","uri":"fs+a:b","name":"n"}],"structuredContent":{"uri":"keep"}}`},
		{"nothing to do", MethodToolsCall, `{"content":[{"type":"text","text":"x"}]}`, `{"content":[{"type":"text","text":"x"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rw.result(tt.method, []byte(tt.in))
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []string
		err  error
	}{
		{"basic", "event: message\ndata: {\"a\":1}\n\n", 100, []string{`{"a":1}`}, io.EOF},
		{"comments and CRLF", ": keep-alive\r\n\r\ndata: a\r\ndata:b\r\n\r\nid: 4\nretry: 10\n\n", 100, []string{"a\nb"}, io.EOF},
		{"partial event dropped", "data: x\n\ndata: y", 100, []string{"x"}, io.EOF},
		{"event too large", "data: 0123456789\n\n", 5, nil, errEventTooLarge},
		{"too large across lines", "data: 0123\ndata: 4567\n\n", 6, nil, errEventTooLarge},
		{"long line beyond buffer", "data: " + strings.Repeat("x", 40000) + "\n\n", 50000, []string{strings.Repeat("x", 40000)}, io.EOF},
		{"long line over max", "data: " + strings.Repeat("x", 40000) + "\n\n", 1000, nil, errEventTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newSSEReader(strings.NewReader(tt.in), tt.max)
			var got []string
			var err error
			for range 100 {
				var d []byte
				if d, err = r.next(); err != nil {
					break
				}
				got = append(got, string(d))
			}
			if !errors.Is(err, tt.err) || strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("data: a\n\n: c\ndata: b\r\n\r\n"), 16)
	f.Add([]byte("data"), 1)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max <= 0 || max > 1<<16 {
			return
		}
		r := newSSEReader(strings.NewReader(string(in)), max)
		for range len(in) + 2 {
			d, err := r.next()
			if err != nil {
				return
			}
			if len(d) > max {
				t.Fatalf("event of %d bytes exceeds max %d", len(d), max)
			}
		}
		t.Fatal("reader did not end")
	})
}

func FuzzRewriteParams(f *testing.F) {
	f.Add([]byte(`{"name":"a__b","ref":{"name":"x","uri":"y"},"uri":"z"}`), "new")
	f.Fuzz(func(t *testing.T, params []byte, name string) {
		if jsonrpc.Scan(params, jsonrpc.Limits{}) != nil || len(params) == 0 || params[0] != '{' {
			return
		}
		for _, m := range []string{MethodToolsCall, MethodResourcesRead, MethodComplete} {
			out, err := rewriteParams(nil, params, m, Target{"u", name})
			if err != nil {
				continue
			}
			if jsonrpc.Scan(out, jsonrpc.Limits{}) != nil && jsonrpc.Scan([]byte(`{"n":`+string(appendString(nil, name))+`}`), jsonrpc.Limits{}) == nil {
				t.Fatalf("rewriting %s of %s with %q gave invalid JSON %s", m, params, name, out)
			}
		}
	})
}
