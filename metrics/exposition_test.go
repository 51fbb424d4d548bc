package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcp-gateway/gateway/internal/outcome"
)

// TestExpositionLints serves traffic through a recorder on a real registry
// that also carries the runtime collectors, and lints what a scrape returns.
func TestExpositionLints(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := RegisterRuntime(reg); err != nil {
		t.Fatalf("RegisterRuntime: %v", err)
	}
	r, err := New(reg, Options{Upstreams: []string{"github", "slack"}, Version: "v0.1.0"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	touchEverything(r)
	r.SetKnownTools("github", []string{"create_issue", "search"})
	r.ToolCall("github", "search", outcome.BackendError)
	r.MRTREvent(EventRejected, RejectTampered)

	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatalf("GatherAndLint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	if n, _ := testutil.GatherAndCount(reg, "go_goroutines", NameBuildInfo); n != 2 {
		t.Errorf("runtime and build_info series = %d, want 2", n)
	}
}
