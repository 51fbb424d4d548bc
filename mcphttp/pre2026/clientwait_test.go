package pre2026

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLegacyClientWaitLeftOutOfLatency: a pre-2026 call that waits for its user (here a backend's
// elicitation the user takes minutes to answer, on the gateway's clock) is observed in the
// request duration without those minutes, which go to the client-wait histogram, so a p99
// latency objective never counts a person thinking.
func TestLegacyClientWaitLeftOutOfLatency(t *testing.T) {
	// The user thinks for longer than any request should take, within the round's timeout.
	const think = DefaultLegacyAskTimeout / 2
	be := mcptest.StartServer(t, "be")
	clock := mcptest.NewClock(time.Now())
	reg := prometheus.NewRegistry()
	rec, err := metrics.New(reg, metrics.Options{Upstreams: []string{"be"}})
	if err != nil {
		t.Fatal(err)
	}
	gw, _ := startLegacyGateway(t, gwSpec{Deps: mcphttp.Deps{MRTR: testMRTRCodec(t), Clock: clock.Now, Metrics: rec}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			clock.Advance(think)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}))
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__ask_name", Arguments: map[string]any{}})
	if err != nil || res.IsError || mcptest.ResultText(res) != "Hello, Ada" {
		t.Fatalf("ask_name: %v %+v", err, res)
	}
	// The request is recorded once its response is written, which the client may read first.
	mcptest.WaitFor(t, "the call recorded", func() bool {
		h := findHistogram(reg, metrics.NameRequestDuration, "tools/call")
		return h != nil && h.GetSampleCount() > 0
	})
	latency := histogramOf(t, reg, metrics.NameRequestDuration, "tools/call")
	wait := histogramOf(t, reg, metrics.NameClientWait, "tools/call")
	if latency.GetSampleCount() != 1 || latency.GetSampleSum() >= think.Seconds() {
		t.Errorf("request duration of the call: %d samples, %v s; want 1 without the user's %v",
			latency.GetSampleCount(), latency.GetSampleSum(), think)
	}
	if wait.GetSampleCount() != 1 || wait.GetSampleSum() < think.Seconds() {
		t.Errorf("client wait of the call: %d samples, %v s; want 1 of at least %v",
			wait.GetSampleCount(), wait.GetSampleSum(), think)
	}
}

// histogramOf returns the histogram of family name for method, failing when it is absent.
func histogramOf(t *testing.T, reg prometheus.Gatherer, name, method string) *dto.Histogram {
	t.Helper()
	h := findHistogram(reg, name, method)
	if h == nil {
		t.Fatalf("no %s{method=%q}", name, method)
	}
	return h
}

// findHistogram returns the histogram of family name for method, nil when it is absent.
func findHistogram(reg prometheus.Gatherer, name, method string) *dto.Histogram {
	mfs, err := reg.Gather()
	if err != nil {
		return nil
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "method" && lp.GetValue() == method {
					return m.GetHistogram()
				}
			}
		}
	}
	return nil
}
