package mcphttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// newCannedBackend answers every request with one JSON-RPC result without a network
// (mcptest.CannedBackend).
func newCannedBackend() *mcptest.CannedBackend { return mcptest.NewCannedBackend() }

// BenchmarkForwardToolsCall is a full forwarded tools/call through the echo handler: guard,
// decode, header and version checks, routing, forwarding through upstreams to an in-process
// backend, and the rewritten JSON response. Authentication is off here; authz has its own
// benchmarks.
func BenchmarkForwardToolsCall(b *testing.B) {
	// A codec, as cmd/gateway always configures one: plain calls must not pay for MRTR.
	replays, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		b.Fatal(err)
	}
	codec, err := mrtr.New(testStateSealer(b), mrtr.Config{}, replays, nil)
	if err != nil {
		b.Fatal(err)
	}
	_, e := testServer(b, Config{}, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{Transport: newCannedBackend()},
		Deps{Version: "bench", MRTR: codec})
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + meta + `,"name":"be__echo","arguments":{"text":"hello"}}}`
	h := modern("tools/call", "be__echo")
	benchPost(b, e, h, body)
}

// BenchmarkDecodeAndCheck is stages guard to headers of a tools/call on their own: the transport guard
// (Origin, Content-Type, Accept, the bounded body read), the strict decode of the message, its
// params and _meta, the version check, the method lookup and the Mcp-Method/Mcp-Name checks.
func BenchmarkDecodeAndCheck(b *testing.B) {
	s, _ := testServer(b, Config{}, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{}, Deps{Version: "bench"})
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + meta + `,"name":"be__echo","arguments":{"text":"hello"}}}`
	h := modern("tools/call", "be__echo")
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	req.Header, req.Host = h, "127.0.0.1"
	rd := strings.NewReader(body)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		req.Body, req.ContentLength = io.NopCloser(rd), int64(len(body))
		x := &request{shared: shared{s: s, r: req, hdr: req.Header}, client: &ClientSink{srv: s}}
		if err := s.guard(x); err != nil {
			b.Fatal(err)
		}
		if err := s.decode(x); err != nil {
			b.Fatal(err)
		}
		if err := checkVersion(x.hdr, x.in.meta, x.in.req); err != nil {
			b.Fatal(err)
		}
		h, err := lookupMethod(s.handlers, x.in.req.Method)
		if err != nil {
			b.Fatal(err)
		}
		if err := checkHeaders(x.hdr, h, x.in.req.Method, x.in.params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHarnessOnly is BenchmarkForwardToolsCall without the gateway: the same request
// construction and reused writer, and one round trip to the same canned backend, around an echo
// handler that only copies the backend's answer. Its allocations are the harness's share of the
// forwarded call's; the difference between the two is the gateway's own.
func BenchmarkHarnessOnly(b *testing.B) {
	backend := newCannedBackend()
	toBackend, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:9/mcp", http.NoBody)
	if err != nil {
		b.Fatal(err)
	}
	e := echo.New()
	e.POST("/mcp", func(c echo.Context) error {
		if _, err := io.Copy(io.Discard, c.Request().Body); err != nil {
			return err
		}
		resp, err := backend.RoundTrip(toBackend)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		w := c.Response()
		w.Header()["Content-Type"] = resp.Header["Content-Type"]
		w.WriteHeader(http.StatusOK)
		_, err = io.Copy(w, resp.Body)
		return err
	})
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + meta + `,"name":"be__echo","arguments":{"text":"hello"}}}`
	benchPost(b, e, modern("tools/call", "be__echo"), body)
}

// benchPost posts body with headers h to the echo handler once per iteration, asserting 200
// (mcptest.BenchPost).
func benchPost(b *testing.B, e *echo.Echo, h http.Header, body string) {
	b.Helper()
	mcptest.BenchPost(b, e, h, body)
}
