package upstreams

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// benchToolsBody is a tools/list result of n tools with cache hints.
func benchToolsBody(n, ttlMs int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"tools":[`)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"name":"tool_%03d","description":"Does thing %d.","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}`, i, i)
	}
	fmt.Fprintf(&sb, `],"resultType":"complete","ttlMs":%d,"cacheScope":"public"}}`, ttlMs)
	return []byte(sb.String())
}

// benchFanOut builds a Registry over 20 loopback backends of 100 tools each.
func benchFanOut(b *testing.B, cache CacheConfig) *Registry {
	body := benchToolsBody(100, 60000)
	var ups []UpstreamConfig
	for i := range 20 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}))
		b.Cleanup(srv.Close)
		ups = append(ups, UpstreamConfig{Name: fmt.Sprintf("b%02d", i), URL: srv.URL + "/mcp", Protocol: ProtocolVersion})
	}
	return newTestRegistry(b, Config{Upstreams: ups, Cache: cache}, Options{})
}

// BenchmarkToolsList20x100 is tools/list (first page of 100 out of 2000 merged tools) across 20
// backends of 100 tools: cold asks every backend each time, cached serves from the list cache.
func BenchmarkToolsList20x100(b *testing.B) {
	params := json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)
	for _, bc := range []struct {
		name  string
		cache CacheConfig
	}{{"cold", CacheConfig{Disabled: true}}, {"cached", CacheConfig{}}} {
		b.Run(bc.name, func(b *testing.B) {
			r := benchFanOut(b, bc.cache)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList, Params: params}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
