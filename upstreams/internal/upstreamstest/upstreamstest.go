// Package upstreamstest holds the fixtures the tests of upstreams and of its rooms (catalog,
// listen) share: loopback backends that speak the wire protocol, scripted answers, and a
// listening client. It is imported by tests only.
package upstreamstest

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Meta is a valid 2026-07-28 request _meta.
const Meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// Loopback serves h on a loopback port until the test ends and returns its base URL.
func Loopback(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

// Scripted starts a loopback backend whose n-th request (from 1) is answered by answer, and
// returns its MCP URL and request counter.
func Scripted(t testing.TB, answer func(n int64, w http.ResponseWriter, r *http.Request)) (string, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	url := Loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		answer(hits.Add(1), w, r)
	}))
	return url + "/mcp", &hits
}

// WriteJSON answers with body as application/json.
func WriteJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}

// SSEEvent writes one message event of an event stream and flushes it.
func SSEEvent(w http.ResponseWriter, data string) {
	io.WriteString(w, "event: message\ndata: "+data+"\n\n")
	w.(http.Flusher).Flush()
}

// RequestID returns the JSON-RPC id of a request body, or null.
func RequestID(body []byte) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || m.ID == nil {
		return "null"
	}
	return string(m.ID)
}

// Backends builds the backends cfgs as a Registry would, with the default separator, and closes
// them when the test ends.
func Backends(t testing.TB, cfgs ...backend.Config) ([]*backend.Backend, *names.Space) {
	t.Helper()
	upstreams := make([]string, len(cfgs))
	for i := range cfgs {
		upstreams[i] = cfgs[i].Name
	}
	ns := names.New("__", false, upstreams)
	env := &backend.Env{Log: slog.New(slog.DiscardHandler), Now: time.Now, Names: ns, Results: bodyread.NewBudget(128 << 20)}
	var bs []*backend.Backend
	t.Cleanup(func() { backend.CloseAll(bs) })
	for _, cfg := range cfgs {
		b, err := backend.New(cfg, env)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	return bs, ns
}

// HeapInUse is the live heap after two collections.
func HeapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
