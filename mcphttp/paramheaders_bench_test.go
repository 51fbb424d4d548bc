package mcphttp

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// listingBackend is a canned backend that also answers tools/list, with a tool that mirrors its
// region argument into Mcp-Param-Region.
type listingBackend struct {
	*mcptest.CannedBackend
	list []byte
}

func (l *listingBackend) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Mcp-Method") != "tools/list" {
		return l.CannedBackend.RoundTrip(r)
	}
	_, _ = io.Copy(io.Discard, r.Body)
	return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: jsonHeader,
		Body: io.NopCloser(bytes.NewReader(l.list)), ContentLength: int64(len(l.list)), Request: r}, nil
}

// jsonHeader is the header of a canned JSON answer (read-only).
var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// BenchmarkForwardToolsCallParamHeader is BenchmarkForwardToolsCall for a tool that declares
// an x-mcp-header, with the header sent: the binding lookup, the check against the argument and
// the recomputed header, with the tool list held by the gateway.
func BenchmarkForwardToolsCallParamHeader(b *testing.B) {
	backend := &listingBackend{CannedBackend: newCannedBackend(), list: []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[` +
		`{"name":"region","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}],` +
		`"ttlMs":600000,"cacheScope":"public","resultType":"complete"}}`)}
	_, e := testServer(b, Config{}, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{Transport: backend}, Deps{Version: "bench"})
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + meta + `,"name":"be__region","arguments":{"region":"eu"}}}`
	benchPost(b, e, with(modern("tools/call", "be__region"), "Mcp-Param-Region", "eu"), body)
}
