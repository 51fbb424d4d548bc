package guardrails

import (
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/racetest"
)

// The scanner remembers the last host it found allowed; the next check, under a rule that allows
// other hosts, must not take that memory for its own.
func TestAllowedHostRememberedPerCheck(t *testing.T) {
	cfg := &Config{
		AllowedHosts: []string{"docs.example.com"},
		Rules: []RuleConfig{
			{ID: "docs", Tools: []string{"docs"}, Results: DirectionConfig{Injection: "flag"}},
			{ID: "other", Tools: []string{"other"}, Results: DirectionConfig{Injection: "flag"},
				AllowedHosts: []string{"api.example.com"}},
		},
	}
	e := testEngine(t, cfg)
	docs, other := e.Rule(KindTool, "up", "docs"), e.Rule(KindTool, "up", "other")
	result := []byte(`{"content":[{"type":"text","text":"see https://docs.example.com/a and https://docs.example.com/b"}]}`)
	for range 3 { // one goroutine: the pool hands the same walker back
		if rep := docs.ScanResult(result); !rep.Clean() {
			t.Fatalf("docs rule: %v, want no finding", rep.Findings)
		}
		rep := other.ScanResult(result)
		if rep.Counts[DetLink] != 2 {
			t.Fatalf("other rule: %d link findings, want 2", rep.Counts[DetLink])
		}
	}
	// Within one text: an allowed host remembered does not let another one pass.
	mixed := []byte(`{"content":[{"type":"text","text":"https://docs.example.com/a https://docs.example.com.evil.test/b https://DOCS.example.com/c"}]}`)
	if rep := docs.ScanResult(mixed); rep.Counts[DetLink] != 1 {
		t.Fatalf("mixed: %d link findings, want 1", rep.Counts[DetLink])
	}
}

// A check allocates its report and nothing else (docs/performance.md): the walker, with its
// state and bound callback, comes from the pool.
func TestCheckAllocatesOnlyItsReport(t *testing.T) {
	if racetest.Enabled {
		t.Skip("the race detector drops pooled values at random")
	}
	cfg := everything("redact")
	cfg.AllowedHosts = []string{"*.example.com"}
	r := testEngine(t, cfg).Rule(KindTool, "up", "blob")
	args, result := benchTexts()
	for name, check := range map[string]func() *Report{
		"arguments": func() *Report { return r.ScanArguments(args) },
		"result":    func() *Report { return r.ScanResult(result) },
	} {
		if rep := check(); !rep.Clean() {
			t.Fatalf("%s: %v, want no finding", name, rep.Findings)
		}
		if n := testing.AllocsPerRun(100, func() { check() }); n != 1 {
			t.Errorf("%s: %v allocations per check, want 1 (the report)", name, n)
		}
	}
}
