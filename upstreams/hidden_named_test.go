package upstreams

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestHiddenReadNamesTheURIAsked: a read whose result shows only resources the caller may not
// read is answered as the gateway answers a hidden or unknown resource, naming the URI the
// caller asked for as the caller sent it: quoted, control and other unprintable characters
// escaped, cut to 128 bytes at a character boundary; never the hidden URI the result named.
func TestHiddenReadNamesTheURIAsked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"file:///secret/k","text":"S"}]}}`)
	}))
	defer srv.Close()
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: srv.URL + "/mcp", Protocol: ProtocolVersion}}}, Options{})
	hideSecret := func(_ Kind, tg Target) bool { return !strings.HasPrefix(tg.Name, "file:///secret/") }
	for _, tt := range []struct{ path, want string }{
		{"k", `"alpha+file:///k"`},
		{"a\u0007b\u202e\n", `"alpha+file:///a\ab\u202e\n"`},
		{`"q"`, `"alpha+file:///\"q\""`},
		{strings.Repeat("é", 100), `"alpha+file:///` + strings.Repeat("é", 57) + `"...`},
	} {
		uri := "alpha+file:///" + tt.path
		quoted, _ := json.Marshal(uri)
		s, err := r.Call(context.Background(), &Call{Method: MethodResourcesRead, ID: json.RawMessage(`7`),
			Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"uri":` + string(quoted) + `}`),
			Target: Target{Upstream: "alpha", Name: "file:///" + tt.path}, Visible: hideSecret, Embedded: hideSecret})
		if err != nil {
			t.Fatalf("%q: %v", tt.path, err)
		}
		msgs := collect(t, s)
		var m struct{ Error *jsonrpc.Error }
		if err := json.Unmarshal([]byte(msgs[len(msgs)-1]), &m); err != nil || m.Error == nil {
			t.Fatalf("%q: relayed %s", tt.path, msgs[len(msgs)-1])
		}
		if want := HiddenResourceMessage + " " + tt.want; m.Error.Code != jsonrpc.CodeInvalidParams ||
			m.Error.Message != want || m.Error.Message != UnknownResourceMessage(uri) || s.Status() != http.StatusBadRequest {
			t.Errorf("%q: %d %d %q, want 400 -32602 %q", tt.path, s.Status(), m.Error.Code, m.Error.Message, want)
		}
		if strings.Contains(msgs[len(msgs)-1], "secret") {
			t.Errorf("%q: the hidden URI is named: %s", tt.path, msgs[len(msgs)-1])
		}
	}
}
