package names

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// TestEscapedURIKeyBytes: the same for a result or error data not read by DecodeMessage, whose
// bytes alone decide whether it may name a "uri".
func TestEscapedURIKeyBytes(t *testing.T) {
	rw := Rewriter{Space: New("__", false, []string{"fs"}), Upstream: "fs", Visible: hideSecret, Embedded: hideSecret}
	for _, tt := range []struct{ method, in, want string }{
		{wire.MethodToolsCall, `{"content":[{"type":"resource_link","\u0075ri":"file:///secret/k"},{"type":"text","text":"t"}]}`,
			`{"content":[{"type":"text","text":"t"}]}`},
		{wire.MethodToolsCall, `{"content":[{"type":"resource_link","\u0075ri":"file:///a"}]}`,
			`{"content":[{"type":"resource_link","\u0075ri":"fs+file:///a"}]}`},
		{wire.MethodToolsCall, `{"content":[{"type":"text","text":"\u00e9"},{"type":"resource_link","name":"no uri"}]}`,
			`{"content":[{"type":"text","text":"\u00e9"},{"type":"resource_link","name":"no uri"}]}`},
		{wire.MethodPromptsGet, `{"messages":[{"role":"user","content":{"type":"resource_link","\u0075ri":"file:///secret/k"}}]}`,
			`{"messages":[]}`},
	} {
		got, err := resultFromBytes(rw, tt.method, []byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s\n got %s, %v\nwant %s", tt.in, got, err, tt.want)
		}
	}
	if _, ok := rw.ErrorData([]byte(`{"\u0075ri":"file:///secret/k"}`)); ok {
		t.Error("error data naming a hidden URI under an escaped key relayed")
	}
	if d, ok := rw.ErrorData([]byte(`{"\u0075ri":"file:///a"}`)); !ok || string(d) != `{"\u0075ri":"fs+file:///a"}` {
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
	rw := Rewriter{Space: New("__", false, []string{"fs"}), Upstream: "fs", Visible: hideSecret, Embedded: hideSecret}
	f.Fuzz(func(t *testing.T, res string) {
		m, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":`+res+`}`), jsonrpc.Limits{})
		if err != nil || m.Result == nil {
			return
		}
		for _, method := range []string{wire.MethodToolsCall, wire.MethodPromptsGet} {
			out, err := rw.Result(method, m)
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
			if method == wire.MethodPromptsGet {
				msgs, _ := v["messages"].([]any)
				blocks = blocks[:0]
				for _, msg := range msgs {
					blocks = append(blocks, mcptest.Path(msg, "content"))
				}
			}
			for _, blk := range blocks {
				var u any
				switch mcptest.Path(blk, "type") {
				case "resource_link":
					u = mcptest.Path(blk, "uri")
				case "resource":
					u = mcptest.Path(blk, "resource", "uri")
				}
				if s, ok := u.(string); ok && !strings.HasPrefix(s, "fs+") {
					t.Fatalf("%s of %s relays %s with a URI not namespaced", method, res, out)
				}
			}
		}
	})
}
