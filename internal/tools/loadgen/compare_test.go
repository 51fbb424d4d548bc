package loadgen

import (
	"bytes"
	"strings"
	"testing"
)

// TestCompareSeveralBaselines: each row gets ratios to every baseline that ran in its own
// scenario, the first baseline also fills the single-baseline fields, and the table has three
// columns per baseline that appears.
func TestCompareSeveralBaselines(t *testing.T) {
	run := func(scenario, target string, ops, p99 float64) *Report {
		r := &Report{Scenario: scenario, Target: target}
		r.Total.OpsPerSec, r.Total.Latency.P50, r.Total.Latency.P99 = ops, p99/2, p99
		return r
	}
	rows := Compare([]*Report{
		run("call", "nginx", 1000, 4),
		run("call", "go-proxy", 800, 5),
		run("call", "gateway", 720, 6),
		run("scaled", "go-proxy", 800, 5),
		run("scaled", "gw-redis", 700, 6),
		run("scaled", "gw-limits", 630, 8),
	}, "nginx", "go-proxy", "gw-redis")
	got := map[string]Row{}
	for _, r := range rows {
		got[r.Scenario+"/"+r.Target] = r
	}
	if r := got["call/gateway"]; r.ThroughputRatio != 0.72 || r.Versus["go-proxy"].Throughput != 0.9 || r.Versus["go-proxy"].P99 != 1.2 {
		t.Errorf("call/gateway = %+v, want 0.72× nginx and 0.9× go-proxy with p99 1.2×", r)
	}
	if r := got["scaled/gw-limits"]; r.ThroughputRatio != 0 || r.Versus["gw-redis"].Throughput != 0.9 || len(r.Versus) != 2 {
		t.Errorf("scaled/gw-limits = %+v, want no nginx ratio, 0.9× gw-redis", r)
	}
	var table bytes.Buffer
	if err := WriteRows(&table, rows, "nginx", "go-proxy", "gw-redis", "absent"); err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(table.String(), "\n", 2)[0]
	for _, col := range []string{"xnginx req/s", "xgo-proxy req/s", "xgw-redis req/s"} {
		if !strings.Contains(head, col) {
			t.Errorf("header %q lacks %q", head, col)
		}
	}
	if strings.Contains(head, "absent") {
		t.Errorf("header %q has a column for a baseline that never ran", head)
	}
}
