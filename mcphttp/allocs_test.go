package mcphttp

import (
	"flag"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/racetest"
)

// TestAllocationBudgets holds the allocation counts docs/performance.md and docs/guardrails.md
// promise: a forwarded tools/call makes at most 40 allocations, one whose result is streamed
// (four events) at most 49 and flushes nothing before the end of the response, and the
// guardrails add none to a call in which they find nothing (what they keep of a request comes
// from a pool). It counts with testing.Benchmark, 500 calls each. Under the race detector
// sync.Pool drops what it holds at random, so the counts mean nothing there: make unit runs
// this test once without -race.
func TestAllocationBudgets(t *testing.T) {
	if racetest.Enabled {
		t.Skip("allocations are counted without -race")
	}
	bt := flag.Lookup("test.benchtime")
	was := bt.Value.String()
	if err := bt.Value.Set("500x"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bt.Value.Set(was) })
	if n := testing.Benchmark(BenchmarkForwardToolsCall).AllocsPerOp(); n > 40 {
		t.Errorf("a forwarded tools/call makes %d allocations, want at most 40", n)
	}
	sse := testing.Benchmark(BenchmarkForwardToolsCallSSE)
	flushes, counted := sse.Extra["flushes/op"]
	if n := sse.AllocsPerOp(); !counted || n > 49 || flushes != 0 {
		t.Errorf("a streamed tools/call makes %d allocations and %v flushes before its end, want at most 49 and 0", n, flushes)
	}
	body, result := typicalCall()
	engine := benchRails(t, false)
	off := testing.Benchmark(func(b *testing.B) { benchTypicalCall(b, nil, body, result) }).AllocsPerOp()
	on := testing.Benchmark(func(b *testing.B) { benchTypicalCall(b, engine, body, result) }).AllocsPerOp()
	if on != off {
		t.Errorf("a call with no finding makes %d allocations with guardrails, %d without", on, off)
	}
}
