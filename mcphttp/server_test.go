package mcphttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func body(method, extra string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + meta + extra + `}}`
}

// modern returns the headers of a well-formed 2026-07-28 request for method (and name).
func modern(method, name string) http.Header { return mcptest.RequestHeaders(method, name) }

func with(h http.Header, kv ...string) http.Header {
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

type response struct {
	status int
	header http.Header
	body   []byte
	rpc    struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
}

func do(t testing.TB, method, url string, h http.Header, b string) *response {
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
	r := &response{status: res.StatusCode, header: res.Header, body: raw}
	payload := raw
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		payload = lastSSEData(raw)
	}
	if len(payload) > 0 {
		if err := json.Unmarshal(payload, &r.rpc); err != nil {
			t.Fatalf("response body is not JSON-RPC: %v\n%s", err, raw)
		}
	}
	return r
}

func lastSSEData(raw []byte) []byte {
	var last []byte
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			last = d
		}
	}
	return last
}
