package guardrails

import "testing"

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
