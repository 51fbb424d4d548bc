package guardrails

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unique"
)

// The typical call of the .ci/bench guardrails scenario: 1 KiB of prose arguments and a 4 KiB
// prose result, no finding in either, every guardrail on.
const benchProse = "Build 48213 of service checkout-api finished on 2026-03-14 at 09:42 UTC with status " +
	"passed after 6m 12s. Stage compile took 71s, unit tests 3m 05s (1,284 tests, 0 failures), " +
	"and integration 1m 48s. Artifacts were published to https://artifacts.example.com/checkout-api/48213 " +
	"and the report is at /var/lib/ci/reports/48213/summary.html. Reviewers: the payments team. "

func benchTexts() (args, result []byte) {
	prose := func(n int) string { return strings.Repeat(benchProse, n/len(benchProse)+1)[:n] }
	args = []byte(`{"bytes":4096,"prose":true,"note":` + jsonString(prose(1000)) + `}`)
	result = []byte(`{"content":[{"type":"text","text":` + jsonString(prose(4096)) + `}]}`)
	return args, result
}

func BenchmarkTypicalCall(b *testing.B) {
	cfg := everything("redact")
	cfg.AllowedHosts = []string{"*.example.com"}
	e := testEngine(b, cfg)
	r := e.Rule(KindTool, "fast", "blob")
	args, result := benchTexts()
	schema := e.ContentSchema(unique.Make(`{"type":"object","properties":{"bytes":{"type":"integer"},"prose":{"type":"boolean"},"note":{"type":"string"}},"required":["bytes"]}`))
	b.Run("schema", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if v, err := schema.Validate(args); v != nil || err != nil {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("arguments", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if rep := r.ScanArguments(args); !rep.Clean() {
				b.Fatal(rep.Findings)
			}
		}
	})
	b.Run("result", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if rep := r.ScanResult(result); !rep.Clean() {
				b.Fatal(rep.Findings)
			}
		}
	})
	// The same checks over texts that differ from call to call: the prose's words in 64
	// shuffled orders, taken in turn. A loop over one text lets the processor's branch
	// predictor learn that text, which a gateway's scans never benefit from (between two of them
	// it runs the rest of the call, and real results differ); these rows are the scans' cost
	// without that help (docs/performance.md, "Where the guarded call's CPU goes").
	argsVaried, resultVaried := benchVariants(b, 64, 1000), benchVariants(b, 64, 4096)
	for i := range argsVaried {
		argsVaried[i] = []byte(`{"bytes":4096,"prose":true,"note":` + jsonString(string(argsVaried[i])) + `}`)
		resultVaried[i] = []byte(`{"content":[{"type":"text","text":` + jsonString(string(resultVaried[i])) + `}]}`)
	}
	for _, c := range []struct {
		name  string
		texts [][]byte
		scan  func([]byte) *Report
	}{{"arguments-varied", argsVaried, r.ScanArguments}, {"result-varied", resultVaried, r.ScanResult}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if rep := c.scan(c.texts[i%len(c.texts)]); !rep.Clean() {
					b.Fatal(rep.Findings)
				}
				i++
			}
		})
	}
}

// benchVariants returns n texts of the typical call's prose with its words shuffled (a fixed
// seed: the same texts every run), each cut at a space to at most size bytes.
func benchVariants(b *testing.B, n, size int) [][]byte {
	words := strings.Fields(strings.Repeat(benchProse, size/len(benchProse)+2))
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, n)
	for i := range out {
		w := slices.Clone(words)
		rng.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
		s := strings.Join(w, " ")[:size]
		out[i] = []byte(s[:strings.LastIndexByte(s, ' ')])
	}
	if len(out[0]) < size-40 {
		b.Fatalf("a variant of %d bytes, not about %d", len(out[0]), size)
	}
	return out
}

// BenchmarkScan is the text scanner's loop alone over 4 KiB of the typical call's prose and 4
// KiB of plain English words (no finding in either), every content detector on, and none (the
// "-off" rows: the loop's own cost, with no detector but the loop's steps). The "prose-varied"
// rows scan the 64 shuffles of BenchmarkTypicalCall's varied rows in turn: the loop's cost on
// text the branch predictor has not learnt, without the walker around it.
func BenchmarkScan(b *testing.B) {
	tb, hosts := newTables(), newHostSet([]string{"*.example.com"})
	prose := strings.Repeat(benchProse, 4096/len(benchProse)+1)[:4096]
	words := strings.Repeat("the quick brown fox jumps over the lazy dog while a team reviews their notes and ", 60)[:4096]
	for _, c := range []struct {
		name  string
		texts [][]byte
	}{{"prose", [][]byte{[]byte(prose)}}, {"prose-varied", benchVariants(b, 64, 4096)}, {"words", [][]byte{[]byte(words)}}} {
		for _, on := range []detSet{allOn(), 0} {
			name := c.name
			if on == 0 {
				name += "-off"
			}
			b.Run(name, func(b *testing.B) {
				s := textScan{tb: tb, on: on, hosts: hosts}
				s.emit = func(Detector, int, int) { b.Fatal("a finding in the bench's text") }
				b.SetBytes(int64(len(c.texts[0])))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					s.t = c.texts[i%len(c.texts)]
					s.limit = len(s.t)
					s.run()
					i++
				}
			})
		}
	}
}

// BenchmarkScanResults scans every recorded real tools/call result (testdata/results) as the
// gateway scans a result, every guardrail on: what the scan costs a byte on real results (code,
// documents, listings, diffs), beside the typical call's prose (BenchmarkTypicalCall/result).
func BenchmarkScanResults(b *testing.B) {
	results := loadResults(b)
	cfg := everything("redact")
	cfg.AllowedHosts = []string{"*.example.com"}
	r := testEngine(b, cfg).Rule(KindTool, "x", "x")
	var n int64
	for _, res := range results {
		n += int64(len(res.Result))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, res := range results {
			if rep := r.ScanResult(res.Result); rep.Err != nil {
				b.Fatal(rep.Err)
			}
		}
	}
}
