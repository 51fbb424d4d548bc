package legacysession

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
)

// BenchmarkOpen is the cost every pre-2026 request pays for its session.
func BenchmarkOpen(b *testing.B) {
	c := New(ring(b, testKey("k1", 1), testKey("k2", 2)), time.Hour, nil)
	id, _ := mint(b, c, alice)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Open(id, alice); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMint is the cost of an initialize's session.
func BenchmarkMint(b *testing.B) {
	c := New(ring(b, testKey("k1", 1), testKey("k2", 2)), time.Hour, nil)
	caps := json.RawMessage(`{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Mint(era.V20251125, caps, "claude-code@2.1.0", alice); err != nil {
			b.Fatal(err)
		}
	}
}
