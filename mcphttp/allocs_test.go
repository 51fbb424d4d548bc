package mcphttp

import "testing"

// TestAllocationBudgets holds the allocation counts docs/performance.md and docs/guardrails.md
// promise: a forwarded tools/call makes at most 40 allocations, and the guardrails add none to
// a call in which they find nothing (what they keep of a request comes from a pool). It counts
// with testing.Benchmark, so it takes a few seconds. Under the race detector sync.Pool drops
// what it holds at random, so the counts mean nothing there: make unit runs this test once
// without -race.
func TestAllocationBudgets(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without -race")
	}
	if n := testing.Benchmark(BenchmarkForwardToolsCall).AllocsPerOp(); n > 40 {
		t.Errorf("a forwarded tools/call makes %d allocations, want at most 40", n)
	}
	body, result := typicalCall()
	engine := benchRails(t, false)
	off := testing.Benchmark(func(b *testing.B) { benchTypicalCall(b, nil, body, result) }).AllocsPerOp()
	on := testing.Benchmark(func(b *testing.B) { benchTypicalCall(b, engine, body, result) }).AllocsPerOp()
	if on != off {
		t.Errorf("a call with no finding makes %d allocations with guardrails, %d without", on, off)
	}
}
