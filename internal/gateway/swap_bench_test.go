package gateway

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

// BenchmarkSwapHandler is what serving through the reloadable handler adds to a request: the
// current set's pointer, its in-flight count and the connection's hold, against the same echo
// route served directly.
func BenchmarkSwapHandler(b *testing.B) {
	e := newEcho()
	e.POST("/mcp", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	g := &gateway{}
	c := &components{mcp: e, gate: gate{drained: make(chan struct{})}}
	g.current.Store(c)
	var tracker connTracker
	// One connection per goroutine, as clients have: only the set's count is shared.
	request := func() *http.Request {
		client, server := net.Pipe()
		b.Cleanup(func() { client.Close(); server.Close() })
		ctx := tracker.connContext(context.Background(), server)
		return httptest.NewRequest(http.MethodPost, "/mcp", nil).WithContext(ctx)
	}
	for _, bm := range []struct {
		name string
		h    http.Handler
	}{{"direct", e}, {"swap", mcpHandler{g}}} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				w, req := httptest.NewRecorder(), request()
				for pb.Next() {
					bm.h.ServeHTTP(w, req)
				}
			})
		})
	}
}
