package guardrails

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// realResults are the tools/list results of public MCP servers the tool search is evaluated on:
// tool descriptions and schemas (TestResultFalsePositiveRate measures the detectors on real
// tools/call results). Nothing in them is a secret, personal data or an
// injection: every finding of the secrets, pii, invisible, bidi and instructions detectors on
// them is a false positive. (Links are findings by policy: their hosts are not on an allowlist.)
const realResults = "../toolsearch/testdata/catalog/*.json"

// maxFalsePositives bounds, per detector, the share of the corpus's strings it may flag:
// docs/guardrails.md reports the figures this test logs (go test -v -run TestFalsePositiveRate).
var maxFalsePositives = map[Detector]float64{}

const defaultMaxFalsePositives = 0.002

// TestFalsePositiveRate runs every content detector over the real results and fails when one
// flags more of their strings than its bound.
func TestFalsePositiveRate(t *testing.T) {
	files, err := filepath.Glob(realResults)
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	r := testEngine(t, everything("log")).Rule(KindTool, "x", "x")
	var strs, bytes int
	flagged := map[Detector]int{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(f, err)
		}
		each(doc, func(s string) {
			strs++
			bytes += len(s)
			// One string at a time, so a finding counts the string once.
			rep := r.ScanResult([]byte(`{"text":` + jsonString(s) + `}`))
			rep.EachDetector(func(det Detector, _ Action, _ int) { flagged[det]++ })
		})
	}
	t.Logf("%d files, %d strings, %d bytes", len(files), strs, bytes)
	for d := range numDetectors {
		if d.Guardrail() == Schema {
			continue
		}
		rate := float64(flagged[d]) / float64(strs)
		t.Logf("%-20s %4d strings  %.3f%%", d, flagged[d], 100*rate)
		bound, ok := maxFalsePositives[d]
		if !ok {
			bound = defaultMaxFalsePositives
		}
		if d != DetLink && rate > bound {
			t.Errorf("%s flags %.3f%% of the real results' strings; at most %.3f%%", d, 100*rate, 100*bound)
		}
	}
}

// each calls fn with every string of a decoded JSON value, member names included.
func each(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case []any:
		for _, x := range v {
			each(x, fn)
		}
	case map[string]any:
		for k, x := range v {
			fn(k)
			each(x, fn)
		}
	}
}
