package mcphttp

import (
	"testing"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// BenchmarkForwardToolsCallIntercepted is BenchmarkForwardToolsCall with one request-phase
// validator asked about every call and allowing it: none (off), an Interceptor Server on the
// official Go SDK on loopback (mcp), or the same contract as a plain webhook (webhook). The
// interceptor runs in the benchmark's process, so its own work is in these figures: they are
// what a call costs with the interceptor beside it. .ci/bench (scenario interceptors-c16)
// measures the gateway's share apart, in its own process; docs/guardrails.md has the figures.
func BenchmarkForwardToolsCallIntercepted(b *testing.B) {
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + meta + `,"name":"be__echo","arguments":{"text":"hello"}}}`
	allow := []intercepttest.Interceptor{{Name: "allow", Type: intercept.TypeValidation, Handle: intercepttest.Allow()}}
	for _, bc := range []struct {
		name  string
		start func(testing.TB, []intercepttest.Interceptor) *intercepttest.Server
	}{
		{"off", nil},
		{"mcp", func(tb testing.TB, ics []intercepttest.Interceptor) *intercepttest.Server {
			return intercepttest.Start(tb, ics)
		}},
		{"webhook", intercepttest.StartWebhook},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var set *intercept.Set
			if bc.start != nil {
				set = benchInterceptors(b, bc.start(b, allow), bc.name == "webhook")
			}
			_, e := testServer(b, Config{}, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{Transport: newCannedBackend()},
				Deps{Version: "bench", Interceptors: set})
			benchPost(b, e, modern("tools/call", "be__echo"), body)
		})
	}
}

// benchInterceptors is the interceptor set asking srv's "allow" about every tool call, before
// the backend receives it.
func benchInterceptors(b *testing.B, srv *intercepttest.Server, webhook bool) *intercept.Set {
	b.Helper()
	cfg := governs("allow", srv.URL(), intercept.TypeValidation, intercept.PhaseNameRequest, []string{"*"}, nil, nil)
	cfg.Webhook = webhook
	return newInterceptSet(b, []intercept.Config{cfg})
}
