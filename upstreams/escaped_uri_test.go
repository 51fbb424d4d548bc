package upstreams

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// TestEscapedURIKey: a backend may spell a member name with JSON escapes, "\u0075ri" for "uri",
// which every client decoder reads as "uri". The resource URIs under such a name must be
// namespaced and checked against the caller's policy like any other: a link to a hidden
// resource is dropped, a visible one namespaced, whether or not the result also spells "uri"
// plainly somewhere, and an error's data.uri likewise.
func TestEscapedURIKey(t *testing.T) {
	const secret, public = `"file:///secret/k"`, `"file:///a"`
	for _, tt := range []struct {
		name, method, answer, want string
	}{
		{"link, only escaped", MethodToolsCall,
			`"result":{"content":[{"type":"resource_link","\u0075ri":` + secret + `,"name":"k"}]}`,
			`"result":{"content":[]}`},
		{"link, escaped next to a plain one", MethodToolsCall,
			`"result":{"content":[{"type":"resource_link","\u0075ri":` + secret + `},{"type":"resource_link","uri":` + public + `}]}`,
			`"result":{"content":[{"type":"resource_link","uri":"alpha+file:///a"}]}`},
		{"visible link namespaced", MethodToolsCall,
			`"result":{"content":[{"type":"resource_link","ur\u0069":` + public + `}]}`,
			`"result":{"content":[{"type":"resource_link","ur\u0069":"alpha+file:///a"}]}`},
		{"embedded resource", MethodToolsCall,
			`"result":{"content":[{"type":"resource","resource":{"\u0075ri":` + secret + `,"text":"S"}},{"type":"text","text":"ok"}]}`,
			`"result":{"content":[{"type":"text","text":"ok"}]}`},
		{"prompt message", MethodPromptsGet,
			`"result":{"messages":[{"role":"user","content":{"type":"resource","resource":{"\u0075ri":` + secret + `,"text":"S"}}},{"role":"user","content":{"type":"text","text":"hi"}}]}`,
			`"result":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`},
		{"error data", MethodToolsCall,
			`"error":{"code":-32602,"message":"Resource not found","data":{"\u0075ri":` + secret + `}}`,
			`"error":{"code":-32602,"message":"Resource not found"}`},
		{"error data of a read", MethodResourcesRead,
			`"error":{"code":-32602,"message":"Resource not found","data":{"\u0075ri":` + secret + `}}`,
			`"error":{"code":-32602,"message":"` + HiddenResourceMessage + `"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				io.Copy(io.Discard, req.Body)
				w.Header().Set("Content-Type", "application/json")
				if strings.HasPrefix(tt.answer, `"error"`) {
					w.WriteHeader(http.StatusBadRequest)
				}
				io.WriteString(w, `{"jsonrpc":"2.0","id":7,`+tt.answer+`}`)
			}))
			defer srv.Close()
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: srv.URL + "/mcp"}, {Name: "beta", URL: srv.URL + "/mcp"}}}, Options{})
			params := `{"_meta":` + testMeta + `,"name":"alpha__t"}`
			target := Target{Upstream: "alpha", Name: "t"}
			if tt.method == MethodResourcesRead {
				params, target = `{"_meta":`+testMeta+`,"uri":"alpha+file:///k"}`, Target{Upstream: "alpha", Name: "file:///k"}
			}
			s, err := r.Call(context.Background(), &Call{Method: tt.method, ID: json.RawMessage(`7`),
				Params: json.RawMessage(params), Target: target, Visible: hideSecret, Embedded: hideSecret})
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			msgs := collect(t, s)
			if got, want := msgs[len(msgs)-1], `{"jsonrpc":"2.0","id":7,`+tt.want+`}`; got != want {
				t.Fatalf("relayed\n %s\nwant\n %s", got, want)
			}
		})
	}
}

// TestEscapedURIKeyBytes: the same for a result or error data not read by DecodeMessage, whose
// bytes alone decide whether it may name a "uri".
func TestEscapedURIKeyBytes(t *testing.T) {
	rw := uriRewriter{ns: &namespace{sep: "__", known: map[string]bool{"fs": true}}, upstream: "fs", visible: hideSecret, embedded: hideSecret}
	for _, tt := range []struct{ method, in, want string }{
		{MethodToolsCall, `{"content":[{"type":"resource_link","\u0075ri":"file:///secret/k"},{"type":"text","text":"t"}]}`,
			`{"content":[{"type":"text","text":"t"}]}`},
		{MethodToolsCall, `{"content":[{"type":"resource_link","\u0075ri":"file:///a"}]}`,
			`{"content":[{"type":"resource_link","\u0075ri":"fs+file:///a"}]}`},
		{MethodToolsCall, `{"content":[{"type":"text","text":"\u00e9"},{"type":"resource_link","name":"no uri"}]}`,
			`{"content":[{"type":"text","text":"\u00e9"},{"type":"resource_link","name":"no uri"}]}`},
		{MethodPromptsGet, `{"messages":[{"role":"user","content":{"type":"resource_link","\u0075ri":"file:///secret/k"}}]}`,
			`{"messages":[]}`},
	} {
		got, err := resultFromBytes(rw, tt.method, []byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s\n got %s, %v\nwant %s", tt.in, got, err, tt.want)
		}
	}
	if _, ok := rw.errorData([]byte(`{"\u0075ri":"file:///secret/k"}`)); ok {
		t.Error("error data naming a hidden URI under an escaped key relayed")
	}
	if d, ok := rw.errorData([]byte(`{"\u0075ri":"file:///a"}`)); !ok || string(d) != `{"\u0075ri":"fs+file:///a"}` {
		t.Errorf("error data rewritten to %s, %v", d, ok)
	}
}

// FuzzResultOf: relaying a decoded result as it is when the scan found no "uri" member loses
// no rewrite (the parsed rewrite gives the same JSON), and no resource_link or embedded
// resource a client decodes from what is relayed names a URI that was not namespaced.
func FuzzResultOf(f *testing.F) {
	f.Add(`{"content":[{"type":"resource_link","\u0075ri":"file:///secret/k"},{"type":"text","text":"t"}]}`)
	f.Add(`{"content":[{"type":"resource","resource":{"ur\u0069":"file:///a"}}]}`)
	f.Add(`{"messages":[{"role":"user","content":{"type":"resource_link","uri":"file:///a"}}]}`)
	f.Add(`{"content":[{"type":"text","text":"\"uri\""}],"structuredContent":{"u":1}}`)
	rw := uriRewriter{ns: &namespace{sep: "__", known: map[string]bool{"fs": true}}, upstream: "fs", visible: hideSecret, embedded: hideSecret}
	f.Fuzz(func(t *testing.T, res string) {
		m, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":`+res+`}`), jsonrpc.Limits{})
		if err != nil || m.Result == nil {
			return
		}
		for _, method := range []string{MethodToolsCall, MethodPromptsGet} {
			out, err := rw.resultOf(method, m)
			want, werr := rw.rewriteResult(method, m.Result)
			if (err == nil) != (werr == nil) {
				t.Fatalf("%s of %s: %v, parsed: %v", method, res, err, werr)
			}
			if err != nil {
				continue
			}
			var a, b bytes.Buffer
			if json.Compact(&a, out) != nil || json.Compact(&b, want) != nil || a.String() != b.String() {
				t.Fatalf("%s of %s: relayed %s, parsed rewrite %s", method, res, out, want)
			}
			// Decoded with exact member names, as the rewrite compares them.
			var v map[string]any
			if json.Unmarshal(out, &v) != nil {
				continue
			}
			blocks, _ := v["content"].([]any)
			if method == MethodPromptsGet {
				msgs, _ := v["messages"].([]any)
				blocks = blocks[:0]
				for _, msg := range msgs {
					blocks = append(blocks, path(msg, "content"))
				}
			}
			for _, blk := range blocks {
				var u any
				switch path(blk, "type") {
				case "resource_link":
					u = path(blk, "uri")
				case "resource":
					u = path(blk, "resource", "uri")
				}
				if s, ok := u.(string); ok && !strings.HasPrefix(s, "fs+") {
					t.Fatalf("%s of %s relays %s with a URI not namespaced", method, res, out)
				}
			}
		}
	})
}
