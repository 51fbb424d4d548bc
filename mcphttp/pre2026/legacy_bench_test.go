package pre2026

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// BenchmarkLegacyToolsCall is a tools/call of a 2025-11-25 client with a session, against a
// canned backend: the session opened, the message handed to the pipeline as its request value,
// and the result reshaped and written once. BenchmarkModernToolsCall is the same call of a
// 2026-07-28 client through the same server, edge included: their ratio is the cost of the era.
func BenchmarkLegacyToolsCall(b *testing.B) {
	s, e := benchServer(b)
	sid, _, err := s.sessions.Mint("2025-11-25", json.RawMessage(`{"elicitation":{"form":{}}}`), "bench@1", legacysession.Anonymous)
	if err != nil {
		b.Fatal(err)
	}
	h := legacyHeaders("2025-11-25", sid)
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"be__echo","arguments":{"text":"hello"}}}`
	mcptest.BenchPost(b, e, h, body)
}

// BenchmarkModernToolsCall is BenchmarkLegacyToolsCall's call from a 2026-07-28 client.
func BenchmarkModernToolsCall(b *testing.B) {
	_, e := benchServer(b)
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {mcphttp.ProtocolVersion}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"be__echo"}}
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"` + mcphttp.ProtocolVersion + `",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}},` +
		`"name":"be__echo","arguments":{"text":"hello"}}}`
	mcptest.BenchPost(b, e, h, body)
}

// benchServer is the gateway both benchmarks call: the pre-2026 edge on, a requestState codec
// (as the gateway always has one; plain calls must not pay for it) and one canned backend.
func benchServer(b *testing.B) (*Edge, *echo.Echo) {
	replays, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		b.Fatal(err)
	}
	codec, err := mrtr.New(testStateSealer(b), mrtr.Config{}, replays, nil)
	if err != nil {
		b.Fatal(err)
	}
	return testServer(b, gwSpec{Deps: mcphttp.Deps{Version: "bench", MRTR: codec},
		Opts: upstreams.Options{Transport: mcptest.NewCannedBackend()}},
		upstreams.Config{Upstreams: []upstreams.UpstreamConfig{{Name: "be", URL: "http://127.0.0.1:9/mcp"}}})
}

// BenchmarkLegacySessionOpen is the cost every legacy request pays for its session id.
func BenchmarkLegacySessionOpen(b *testing.B) {
	c := legacysession.New(testKeyRing(b), time.Hour, time.Now)
	sid, _, err := c.Mint("2025-11-25", json.RawMessage(`{"elicitation":{"form":{}},"sampling":{}}`), "bench@1.0.0", legacysession.Bind("https://idp.example", "alice"))
	if err != nil {
		b.Fatal(err)
	}
	p := legacysession.Bind("https://idp.example", "alice")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Open(sid, p); err != nil {
			b.Fatal(err)
		}
	}
}
