package backend

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// BenchmarkLargeResult is the gateway's own work on a backend's JSON answer to a tools/call
// whose result carries 1 MB of text (issue 21): the strict decode of the body, then the
// rewrite of resource URIs, the result taken as mcphttp takes it (ResultOnly: written from the
// response buffer, not copied). "link" adds a resource_link, so the result is rewritten rather
// than relayed as it is.
func BenchmarkLargeResult(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 1<<20/45)
	bodies := map[string]string{
		"text": `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}],"resultType":"complete"}}`,
		"link": `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text +
			`"},{"type":"resource_link","uri":"docs://limits.md","name":"limits"}],"resultType":"complete"}}`,
	}
	ns := names.New("__", false, []string{"alpha", "beta"})
	for _, name := range []string{"text", "link"} {
		body := []byte(bodies[name])
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				m, err := wire.DecodeResponse("beta", 200, body, 4<<20, json.RawMessage(`1`))
				if err != nil {
					b.Fatal(err)
				}
				s := &Stream{method: wire.MethodToolsCall, id: json.RawMessage(`7`), rw: names.Rewriter{Space: ns, Upstream: "beta"}, resultOnly: true}
				if _, err := s.render(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
