package pre2026

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// BenchmarkLegacyToolsCall is BenchmarkForwardToolsCall for a 2025-11-25 client with a session:
// the session opened, the internal 2026-07-28 request synthesised and run through the same
// pipeline, and the result reshaped, against the same canned backend. Compare the two for the
// cost of the legacy edge.
func BenchmarkLegacyToolsCall(b *testing.B) {
	replays, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		b.Fatal(err)
	}
	codec, err := mrtr.New(testStateSealer(b), mrtr.Config{}, replays, nil)
	if err != nil {
		b.Fatal(err)
	}
	s, e := testServer(b, gwSpec{Deps: mcphttp.Deps{Version: "bench", MRTR: codec},
		Opts: upstreams.Options{Transport: mcptest.NewCannedBackend()}},
		upstreams.Config{Upstreams: []upstreams.UpstreamConfig{{Name: "be", URL: "http://127.0.0.1:9/mcp"}}})
	sid, _, err := s.sessions.Mint("2025-11-25", json.RawMessage(`{"elicitation":{"form":{}}}`), "bench@1", legacysession.Anonymous)
	if err != nil {
		b.Fatal(err)
	}
	h := legacyHeaders("2025-11-25", sid)
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"be__echo","arguments":{"text":"hello"}}}`
	mcptest.BenchPost(b, e, h, body)
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
