package mcphttp

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// cannedBackend answers every request with one JSON-RPC result without a network, so a benchmark
// measures the gateway's own work. It reuses its header map (read-only) and body reader, so it
// allocates only the response and its body wrapper; requests must come one at a time.
type cannedBackend struct {
	body []byte
	hdr  http.Header
	rd   bytes.Reader
}

const cannedResult = `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello"}],"resultType":"complete"}}`

func newCannedBackend() *cannedBackend {
	return &cannedBackend{body: []byte(cannedResult), hdr: http.Header{"Content-Type": {"application/json"}}}
}

func (c *cannedBackend) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	c.rd.Reset(c.body)
	return &http.Response{
		StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: c.hdr, Body: io.NopCloser(&c.rd), ContentLength: int64(len(c.body)), Request: r,
	}, nil
}

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

// BenchmarkDecodeAndCheck is stages 1 to 4 of a tools/call on their own: the transport guard
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
		x := &request{s: s, r: req}
		if err := x.guard(); err != nil {
			b.Fatal(err)
		}
		if err := x.decode(); err != nil {
			b.Fatal(err)
		}
		if err := x.checkVersion(); err != nil {
			b.Fatal(err)
		}
		if err := x.checkMethod(); err != nil {
			b.Fatal(err)
		}
		if err := x.checkHeaders(); err != nil {
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

// benchPost posts body with headers h to the echo handler once per iteration, asserting 200.
// The request is built directly and the response writer is reused, so the harness itself
// allocates only the request and its body wrapper (BenchmarkHarnessOnly shows the rest).
func benchPost(b *testing.B, e *echo.Echo, h http.Header, body string) {
	b.Helper()
	w := &benchWriter{h: http.Header{}}
	benchPostTo(b, e, h, body, w, w, func() bool { return w.code == 200 })
}

// benchPostTo is benchPost writing to rw, whose recorded response is w, and taking each
// response that ok accepts.
func benchPostTo(b *testing.B, e *echo.Echo, h http.Header, body string, rw http.ResponseWriter, w *benchWriter, ok func() bool) {
	b.Helper()
	u := &url.URL{Path: "/mcp"}
	rd := strings.NewReader(body)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		req := &http.Request{Method: http.MethodPost, URL: u, RequestURI: "/mcp", Proto: "HTTP/1.1", ProtoMajor: 1,
			ProtoMinor: 1, Header: h, Body: io.NopCloser(rd), ContentLength: int64(len(body)), Host: "127.0.0.1",
			RemoteAddr: "192.0.2.1:1234"}
		w.reset()
		e.ServeHTTP(rw, req)
		if !ok() {
			b.Fatalf("status %d: %s", w.code, w.body.Bytes())
		}
	}
}

// benchWriter is a flushable ResponseWriter whose header map and body buffer are reused
// between iterations.
type benchWriter struct {
	h    http.Header
	body bytes.Buffer
	code int
}

func (w *benchWriter) Header() http.Header { return w.h }

// SetReadDeadline and SetWriteDeadline make the writer support the deadlines the gateway sets
// through http.ResponseController, as net/http's own writer does: without them every call
// would build a "not supported" error, a cost a served request never pays.
func (w *benchWriter) SetReadDeadline(time.Time) error  { return nil }
func (w *benchWriter) SetWriteDeadline(time.Time) error { return nil }

func (w *benchWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

func (w *benchWriter) Flush() {}

func (w *benchWriter) reset() {
	clear(w.h)
	w.body.Reset()
	w.code = 0
}
