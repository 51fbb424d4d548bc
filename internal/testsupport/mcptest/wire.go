package mcptest

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/eventstream"
)

// Meta is the _meta member of a well-formed 2026-07-28 request that declares no capability.
const Meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// Body is a 2026-07-28 request of method with id 1, its params Meta followed by extra (members
// led by a comma).
func Body(method, extra string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + Meta + extra + `}}`
}

// With returns a copy of h with each key set to its value; an empty value deletes the key.
func With(h http.Header, kv ...string) http.Header {
	h = h.Clone()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			h.Del(kv[i])
			continue
		}
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// Response is an HTTP answer of the gateway as a test reads it: the status, the headers, the
// raw body, and the JSON-RPC message in it (the last event's of an SSE stream).
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	RPC    struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
}

// Do sends an HTTP request with the headers h (Host among them, when set) and body b, and reads
// the whole answer; a body that is not JSON-RPC fails the test.
func Do(t testing.TB, method, url string, h http.Header, b string) *Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	if host := h.Get("Host"); host != "" {
		req.Host = host
	}
	c := &http.Client{Timeout: 10 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := &Response{Status: res.StatusCode, Header: res.Header, Body: raw}
	payload := raw
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		payload = LastSSEData(raw)
	}
	if len(payload) > 0 {
		if err := json.Unmarshal(payload, &r.RPC); err != nil {
			t.Fatalf("response body is not JSON-RPC: %v\n%s", err, raw)
		}
	}
	return r
}

// LastSSEData is the data of the last event of an SSE body that has data, read as the
// event-stream standard says (package eventstream: CR LF, LF or CR line ends).
func LastSSEData(raw []byte) []byte {
	var last []byte
	evs, _ := eventstream.Parse(raw, 16<<20)
	for _, ev := range evs {
		if len(ev.Data) > 0 {
			last = ev.Data
		}
	}
	return last
}

// CheckRPC fails the test unless r carries the JSON-RPC error code (0: no error). A parse error
// must have a null id; -32022 must name the supported and requested versions.
func CheckRPC(t *testing.T, r *Response, code int) {
	t.Helper()
	if code == 0 {
		if r.RPC.Error != nil {
			t.Fatalf("unexpected JSON-RPC error %+v", r.RPC.Error)
		}
		return
	}
	if r.RPC.Error == nil {
		t.Fatalf("no JSON-RPC error in body %s", r.Body)
	}
	if r.RPC.Error.Code != code {
		t.Fatalf("code = %d, want %d (%s)", r.RPC.Error.Code, code, r.RPC.Error.Message)
	}
	if code == -32700 && string(r.RPC.ID) != "null" {
		t.Errorf("parse error id = %s, want null", r.RPC.ID)
	}
	if code == -32022 {
		var d struct {
			Supported []string `json:"supported"`
			Requested *string  `json:"requested"`
		}
		if err := json.Unmarshal(r.RPC.Error.Data, &d); err != nil || len(d.Supported) == 0 || d.Supported[0] != "2026-07-28" || d.Requested == nil {
			t.Errorf("-32022 data = %s, want supported and requested", r.RPC.Error.Data)
		}
	}
}

// CannedBackend answers every request with one JSON-RPC result without a network, so a
// benchmark measures the gateway's own work. The result carries the request's id, as a backend's
// must (the gateway relays no answer to another request). It reuses its header map (read-only),
// its buffers and its body reader, so it allocates only the response and its body wrapper;
// requests must come one at a time.
//
// It answers tools/list and prompts/list (by the request's Mcp-Method header) with CannedList():
// the gateway forwards a call only under a name its backend lists.
type CannedBackend struct {
	body    []byte
	hdr     http.Header
	rd      bytes.Reader
	in, out []byte // the last request and its answer
	lists   map[string][]byte
}

// CannedList is what a CannedBackend answers to tools/list and prompts/list unless told
// otherwise (CannedBackend.List): one tool and one prompt, both named echo, cacheable for ten
// minutes. Each call returns a map of its own: tests running in parallel share no list.
func CannedList() map[string][]byte {
	return map[string][]byte{
		"tools/list": []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],` +
			`"ttlMs":600000,"cacheScope":"public","resultType":"complete"}}`),
		"prompts/list": []byte(`{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"echo"}],` +
			`"ttlMs":600000,"cacheScope":"public","resultType":"complete"}}`),
	}
}

// List makes c answer method (tools/list or prompts/list) with body, a JSON-RPC response.
func (c *CannedBackend) List(method string, body []byte) *CannedBackend {
	l := maps.Clone(c.lists)
	l[method] = body
	c.lists = l
	return c
}

// CannedResult is what a CannedBackend answers, under the id of the request.
const CannedResult = `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello"}],"resultType":"complete"}}`

// NewCannedBackend returns a CannedBackend answering CannedResult.
func NewCannedBackend() *CannedBackend {
	return NewCannedBackendOf([]byte(CannedResult), "application/json")
}

// NewCannedBackendOf returns a CannedBackend answering body as contentType, the value of its
// first "id" member replaced by the request's id.
func NewCannedBackendOf(body []byte, contentType string) *CannedBackend {
	return &CannedBackend{body: body, hdr: http.Header{"Content-Type": {contentType}}, lists: CannedList()}
}

// cannedJSON is the header of a canned list (read-only).
var cannedJSON = http.Header{"Content-Type": {"application/json"}}

// RoundTrip answers r with the canned result.
func (c *CannedBackend) RoundTrip(r *http.Request) (*http.Response, error) {
	c.in = c.in[:0]
	for {
		if len(c.in) == cap(c.in) {
			c.in = append(c.in, 0)[:len(c.in)]
		}
		n, err := r.Body.Read(c.in[len(c.in):cap(c.in)])
		c.in = c.in[:len(c.in)+n]
		if err != nil {
			break
		}
	}
	_ = r.Body.Close()
	body, hdr := c.body, c.hdr
	if list, ok := c.lists[r.Header.Get("Mcp-Method")]; ok {
		body, hdr = list, cannedJSON
	}
	c.out = withRequestID(c.out[:0], body, c.in)
	c.rd.Reset(c.out)
	return &http.Response{
		StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: hdr, Body: io.NopCloser(&c.rd), ContentLength: int64(len(c.out)), Request: r,
	}, nil
}

// withRequestID appends body to dst with the value of its first "id" member replaced by that of
// request; body as it is when either has none.
func withRequestID(dst, body, request []byte) []byte {
	ri, rn := idValue(request)
	bi, bn := idValue(body)
	if rn == 0 || bn == 0 {
		return append(dst, body...)
	}
	dst = append(append(dst, body[:bi]...), request[ri:ri+rn]...)
	return append(dst, body[bi+bn:]...)
}

// idValue is where the value of data's first "id" member starts and its length; 0, 0 without one.
func idValue(data []byte) (at, n int) {
	i := bytes.Index(data, []byte(`"id":`))
	if i < 0 {
		return 0, 0
	}
	at = i + len(`"id":`)
	return at, max(idLen(data[at:]), 0)
}

// idLen is the length of the id value v starts with: a string without escapes or a number.
func idLen(v []byte) int {
	if len(v) > 0 && v[0] == '"' {
		return bytes.IndexByte(v[1:], '"') + 2
	}
	n := bytes.IndexAny(v, ",}")
	if n < 0 {
		return 0
	}
	return n
}

// BenchPost posts body with headers h to handler once per iteration, asserting 200. The request
// is built directly and the response writer is reused, so the harness itself allocates only the
// request and its body wrapper.
func BenchPost(b *testing.B, handler http.Handler, h http.Header, body string) {
	b.Helper()
	w := &BenchWriter{h: http.Header{}}
	BenchPostTo(b, handler, h, body, w, w, func() bool { return w.Code == 200 })
}

// BenchPostTo is BenchPost writing to rw, whose recorded response is w, and taking each response
// that ok accepts.
func BenchPostTo(b *testing.B, handler http.Handler, h http.Header, body string, rw http.ResponseWriter, w *BenchWriter, ok func() bool) {
	b.Helper()
	u := &url.URL{Path: "/mcp"}
	rd := strings.NewReader(body)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		req := &http.Request{Method: http.MethodPost, URL: u, RequestURI: "/mcp", Proto: "HTTP/1.1", ProtoMajor: 1,
			ProtoMinor: 1, Header: h, Body: io.NopCloser(rd), ContentLength: int64(len(body)), Host: "127.0.0.1",
			RemoteAddr: "192.0.2.1:1234"}
		w.Reset()
		handler.ServeHTTP(rw, req)
		if !ok() {
			b.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
		}
	}
}

// BenchWriter is a flushable ResponseWriter whose header map and body buffer are reused between
// iterations.
type BenchWriter struct {
	h    http.Header
	Body bytes.Buffer
	Code int
}

// NewBenchWriter returns an empty BenchWriter.
func NewBenchWriter() *BenchWriter { return &BenchWriter{h: http.Header{}} }

// Header is the response's header map.
func (w *BenchWriter) Header() http.Header { return w.h }

// SetReadDeadline and SetWriteDeadline make the writer support the deadlines the gateway sets
// through http.ResponseController, as net/http's own writer does: without them every call
// would build a "not supported" error, a cost a served request never pays.
func (w *BenchWriter) SetReadDeadline(time.Time) error { return nil }

// SetWriteDeadline: see SetReadDeadline.
func (w *BenchWriter) SetWriteDeadline(time.Time) error { return nil }

// WriteHeader records the first status.
func (w *BenchWriter) WriteHeader(code int) {
	if w.Code == 0 {
		w.Code = code
	}
}

// Write appends to the body.
func (w *BenchWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.Body.Write(p)
}

// Flush does nothing: the body is already where a test reads it.
func (w *BenchWriter) Flush() {}

// Reset empties the writer for the next iteration.
func (w *BenchWriter) Reset() {
	clear(w.h)
	w.Body.Reset()
	w.Code = 0
}
