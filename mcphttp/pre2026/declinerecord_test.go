package pre2026

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams"
)

// counter is the value of the series of name whose labels include want, 0 when there is none.
func counter(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := want[lp.GetName()]; ok && v != lp.GetValue() {
					continue series
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// TestLegacyDeclineRecorded: a pre-2026 client whose user declines (or cancels) the gateway's
// confirmation gets a failed tool call on the call's 200 stream, and the access log and metrics
// say so as they do for a 2026-07-28 client's decline: status 200 (what the client was sent,
// never the 403 of a refusal, which a 2025 client would take for its token's scope), outcome
// denied (outcome.Denied names a declined confirmation), and the confirmation counted declined
// in mcp_gateway_legacy_asks_total; the tool never runs.
func TestLegacyDeclineRecorded(t *testing.T) {
	var runs atomic.Int32
	be := mcptest.StartServer(t, "be", destructiveTool(&runs))
	var logs mcptest.LogBuffer
	reg := prometheus.NewRegistry()
	rec, err := metrics.New(reg, metrics.Options{Upstreams: []string{"be"}})
	if err != nil {
		t.Fatal(err)
	}
	gw, _ := startAskingGateway(t, gwSpec{Server: mcphttp.Config{ConfirmDestructiveTools: true},
		Deps: mcphttp.Deps{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Metrics: rec}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	n := 0
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		for _, action := range []string{"decline", "cancel"} {
			cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion(v),
				mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: action}, nil
				}))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__wipe", Arguments: map[string]any{}})
			if err != nil || !res.IsError {
				t.Fatalf("%s %s: %v %+v, want a failed tool call", v, action, err, res)
			}
			n++
		}
	}
	lines := 0
	calls := func(l map[string]any) bool { return l["method"] == "tools/call" }
	for _, l := range waitLogLines(t, &logs, "request", n, calls) {
		lines++
		if l["status"] != float64(200) || l["outcome"] != outcome.Denied || l["sse"] != true || l["era"] != "legacy" {
			t.Errorf("access line %v, want status 200, outcome denied, on a stream", l)
		}
	}
	if lines != n || runs.Load() != 0 {
		t.Fatalf("%d access lines for %d calls, %d runs", lines, n, runs.Load())
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{metrics.NameLegacyAsks, map[string]string{"kind": metrics.AskKindConfirm, "outcome": metrics.AskDeclined}},
		{metrics.NameLegacyRequests, map[string]string{"method": "tools/call", "outcome": outcome.Denied}},
		{metrics.NameToolCalls, map[string]string{"outcome": outcome.Denied}},
	} {
		if got := counter(t, reg, c.name, c.labels); got != float64(n) {
			t.Errorf("%s%v = %v, want %d", c.name, c.labels, got, n)
		}
	}
}
