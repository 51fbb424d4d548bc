package upstreams

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// benchCall forwards one tools/call and reads it to the end.
func benchCall(b *testing.B, r *Registry, c *Call) {
	s, err := r.Call(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	for range 100 {
		_, final, err := s.Next()
		if err != nil {
			b.Fatal(err)
		}
		if final {
			break
		}
	}
	s.Close()
}

func echoCall(upstream string) *Call {
	return &Call{
		Method: MethodToolsCall, ID: json.RawMessage(`1`), Target: Target{Upstream: upstream, Name: "echo"},
		Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"name":"` + upstream + `__echo","arguments":{"text":"hello"}}`),
		Header: http.Header{"Traceparent": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
	}
}

// BenchmarkCallGoSDK forwards tools/call echo to an in-process go-sdk backend (SSE answer);
// most of the time and allocations are the backend's.
func BenchmarkCallGoSDK(b *testing.B) {
	backend := mcptest.StartServer(b, "alpha")
	r := newTestRegistry(b, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL()}}}, Options{})
	c := echoCall("alpha")
	b.ReportAllocs()
	for b.Loop() {
		benchCall(b, r, c)
	}
}

// BenchmarkCallJSONBackend isolates the gateway's side: the backend answers a fixed JSON body.
func BenchmarkCallJSONBackend(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}]}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	r := newTestRegistry(b, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: srv.URL + "/mcp"}}}, Options{})
	c := echoCall("alpha")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			benchCall(b, r, c)
		}
	})
}
