package upstreams

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
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
			`"error":{"code":-32602,"message":"` + HiddenResourceMessage + ` \"alpha+file:///k\""}`},
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
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: srv.URL + "/mcp", Protocol: ProtocolVersion},
				{Name: "beta", URL: srv.URL + "/mcp", Protocol: ProtocolVersion}}}, Options{})
			params := `{"_meta":` + upstreamstest.Meta + `,"name":"alpha__t"}`
			target := Target{Upstream: "alpha", Name: "t"}
			if tt.method == MethodResourcesRead {
				params, target = `{"_meta":`+upstreamstest.Meta+`,"uri":"alpha+file:///k"}`, Target{Upstream: "alpha", Name: "file:///k"}
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
