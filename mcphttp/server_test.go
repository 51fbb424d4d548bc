package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// testGateway is a gateway (mcphttp over a real upstreams.Registry) in front of real go-sdk
// backends, served over real HTTP on loopback.
type testGateway struct {
	URL string
	srv *httptest.Server
}

func startGateway(t testing.TB, cfg Config, ups ...upstreams.UpstreamConfig) *testGateway {
	t.Helper()
	_, e := testServer(t, cfg, upstreams.Config{Upstreams: ups}, upstreams.Options{}, Deps{Version: "test"})
	hs := serveTest(t, e)
	return &testGateway{URL: hs.URL + DefaultPath, srv: hs}
}

const meta = mcptest.Meta

func body(method, extra string) string { return mcptest.Body(method, extra) }

// modern returns the headers of a well-formed 2026-07-28 request for method (and name).
func modern(method, name string) http.Header { return mcptest.RequestHeaders(method, name) }

func with(h http.Header, kv ...string) http.Header { return mcptest.With(h, kv...) }

type response = mcptest.Response

func do(t testing.TB, method, url string, h http.Header, b string) *response {
	t.Helper()
	return mcptest.Do(t, method, url, h, b)
}
