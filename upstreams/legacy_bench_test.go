package upstreams

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// BenchmarkCallLegacyGoSDK is BenchmarkCallGoSDK against the go-sdk's stateful 2025-11-25
// server: the same tools/call echo, bridged over a pooled session.
func BenchmarkCallLegacyGoSDK(b *testing.B) {
	backend := mcptest.StartLegacyServer(b, "alpha")
	r := newTestRegistry(b, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL()}}}, Options{})
	c := echoCall("alpha")
	benchCall(b, r, c) // the era probe and initialize happen once, outside the loop
	b.ReportAllocs()
	for b.Loop() {
		benchCall(b, r, c)
	}
}

// BenchmarkCallLegacyJSONBackend is BenchmarkCallJSONBackend for a legacy backend: a fixed JSON
// answer on a session, so what remains is the gateway's bridging (id rewrite, _meta strip,
// result translation).
func BenchmarkCallLegacyJSONBackend(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(req.Body)
		_ = json.Unmarshal(body, &m)
		switch {
		case m.Method == "server/discover":
			http.Error(w, "no session", http.StatusBadRequest)
			return
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "bench")
		if m.Method == "initialize" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"b","version":"1"}}}`, m.ID)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"hello"}]}}`, m.ID)
	}))
	b.Cleanup(srv.Close)
	r := newTestRegistry(b, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: srv.URL + "/mcp"}}}, Options{})
	c := echoCall("alpha")
	benchCall(b, r, c)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			benchCall(b, r, c)
		}
	})
}
