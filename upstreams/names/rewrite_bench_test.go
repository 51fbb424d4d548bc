package names

import (
	"encoding/json"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// BenchmarkNameRewriting is the naming work of one forwarded tools/call: resolve the namespaced
// name, rewrite params.name to the backend-side name (the rest copied byte for byte), and map the
// resource URIs of the result back to namespaced form. "plain" is the common result without
// URIs (the scan that decoded it has already said so); "resource-links" rewrites a link and an embedded resource.
func BenchmarkNameRewriting(b *testing.B) {
	results := []struct{ name, result string }{
		{"plain", `{"content":[{"type":"text","text":"2 hits: limits.md and quota.md"}],"resultType":"complete"}`},
		{"resource-links", `{"content":[{"type":"text","text":"2 hits"},{"type":"resource_link","uri":"docs://limits.md","name":"limits"},` +
			`{"type":"resource","resource":{"uri":"docs://quota.md","text":"..."}}],"resultType":"complete"}`},
	}
	ns := New("__", false, []string{"alpha", "beta", "gamma"})
	params := []byte(`{"_meta":` + testMeta + `,"name":"beta__search_docs","arguments":{"query":"rate limits","limit":10}}`)
	rw := Rewriter{Space: ns, Upstream: "beta"}
	for _, r := range results {
		b.Run(r.name, func(b *testing.B) {
			// Decoded once, as Stream.render has it: the benchmark times the rewrite, not the scan.
			m, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":`+r.result+`}`), jsonrpc.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]byte, 0, 512)
			var out []byte
			b.ReportAllocs()
			for b.Loop() {
				t, err := ns.Resolve(KindTool, "beta__search_docs")
				if err != nil {
					b.Fatal(err)
				}
				if dst, err = RewriteParams(dst[:0], params, wire.MethodToolsCall, t); err != nil {
					b.Fatal(err)
				}
				if out, err = rw.Result(wire.MethodToolsCall, m); err != nil {
					b.Fatal(err)
				}
			}
			var p struct{ Name string }
			if err := json.Unmarshal(dst, &p); err != nil || p.Name != "search_docs" {
				b.Fatalf("rewritten params %s", dst)
			}
			if r.name == "resource-links" && string(out) == r.result {
				b.Fatal("the resource URIs were not rewritten")
			}
		})
	}
}
