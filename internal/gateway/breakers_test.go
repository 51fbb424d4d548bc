package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// answer503On makes a backend answer 503 to any request whose body holds needle, as a backend
// (or its proxy) does for arguments it cannot handle.
func answer503On(needle string) mcptest.Option {
	return mcptest.WithMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(needle)) {
				http.Error(w, "overloaded", http.StatusServiceUnavailable)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	})
}

// TestOneCallerCannotOpenCircuits: through the gateway, with real tokens of distinct subjects
// and go-sdk clients of 2026-07-28 and 2025-11-25, one caller whose arguments make a backend hang
// or answer 503, or make an interceptor stall (fail-closed, an Interceptor Server) or drop its
// connection (fail-open, a webhook), opens only its own circuits: its next calls are refused,
// unsent, and a fail-open interceptor is not skipped for it but refuses; another caller's calls
// still reach the backend and are still decided by both interceptors. The per-caller events are
// counted without a caller label.
func TestOneCallerCannotOpenCircuits(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha", answer503On("poison"))
	beta := mcptest.StartServer(t, "beta")
	releaseStall := make(chan struct{})
	strict := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "strict", Type: intercept.TypeValidation,
		Handle: func(_ context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
			if strings.Contains(string(inv.Payload), "stall") {
				<-releaseStall // whatever timeout it was told
			}
			return intercepttest.Validation(inv, true, ""), nil
		}}})
	lenient := intercepttest.StartWebhook(t, []intercepttest.Interceptor{{Name: "lenient", Type: intercept.TypeValidation,
		Handle: func(ctx context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
			if strings.Contains(string(inv.Payload), "crash") {
				panic(http.ErrAbortHandler) // the connection is dropped, as by a process dying
			}
			return intercepttest.DenyIf("forbidden", "no")(ctx, inv)
		}}})
	t.Cleanup(func() { close(releaseStall) }) // before the servers close, which wait for handlers
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "*", Tools: []string{"*"}, AnyScope: []string{"tools:use"}}}
		for i := range c.Upstreams {
			c.Upstreams[i].Timeout = 400 * time.Millisecond
			c.Upstreams[i].Breaker.Failures, c.Upstreams[i].Breaker.Cooldown = 2, time.Hour
		}
		s := interceptorEntry("strict", strict.URL(), intercept.TypeValidation, nil, "request")
		s.Rules[0].Upstream, s.Rules[0].Tools = "beta", []string{"echo"}
		l := interceptorEntry("lenient", lenient.URL(), intercept.TypeValidation, nil, "request")
		l.Rules[0].Upstream, l.Rules[0].Tools = "beta", []string{"whoami"}
		l.Webhook, l.FailOpen = true, true
		for _, ic := range []*InterceptorConfig{&s, &l} {
			ic.Timeout = 300 * time.Millisecond
			ic.Breaker.Failures, ic.Breaker.Cooldown = 2, time.Hour
		}
		c.Interceptors = []InterceptorConfig{s, l}
	}, alpha, beta)
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			alice := connectEra(t, gw, era, mcptest.WithBearer(mintFor(t, iss, "alice-"+era)))
			bob := connectEra(t, gw, era, mcptest.WithBearer(mintFor(t, iss, "bob-"+era)))
			call := func(cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
				t.Helper()
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
				if err != nil {
					return err.Error(), false
				}
				return mcptest.ResultText(res), !res.IsError
			}
			mustFail := func(who string, cs *mcp.ClientSession, tool string, args map[string]any) {
				t.Helper()
				if text, ok := call(cs, tool, args); ok {
					t.Fatalf("%s: %s %v succeeded: %s", who, tool, args, text)
				}
			}
			mustServe := func(who string, cs *mcp.ClientSession, tool string, args map[string]any) {
				t.Helper()
				if text, ok := call(cs, tool, args); !ok {
					t.Fatalf("%s: %s %v failed: %s", who, tool, args, text)
				}
			}
			// The backend: alice's call that hangs past the timeout and her call it answers 503
			// open her own circuit; her next call is refused without reaching it, bob's is served.
			mustFail("alice hanging alpha", alice, "alpha__slow", map[string]any{"ms": 60000})
			mustFail("alice poisoning alpha", alice, "alpha__echo", map[string]any{"text": "poison"})
			seen := len(alpha.RequestsOf("tools/call"))
			mustFail("alice, her circuit open", alice, "alpha__echo", map[string]any{"text": "fine"})
			mustServe("bob", bob, "alpha__echo", map[string]any{"text": "fine"})
			if n := len(alpha.RequestsOf("tools/call")); n != seen+1 {
				t.Fatalf("alpha received %d calls, want bob's only after alice's circuit opened (%d before)", n, seen)
			}
			// The fail-closed interceptor: alice's payloads stall it; then her calls are refused
			// without invoking it, while bob's are decided by it.
			mustFail("alice stalling strict", alice, "beta__echo", map[string]any{"text": "stall"})
			mustFail("alice stalling strict", alice, "beta__echo", map[string]any{"text": "stall"})
			invs := len(strict.Invocations())
			mustFail("alice, strict's circuit open for her", alice, "beta__echo", map[string]any{"text": "fine"})
			mustServe("bob through strict", bob, "beta__echo", map[string]any{"text": "fine"})
			if n := len(strict.Invocations()); n != invs+1 {
				t.Fatalf("strict was invoked %d times, want bob's call only (%d before)", n, invs)
			}
			// The fail-open interceptor: alice's payloads crash it, and fail open; once her own
			// circuit is open her calls are refused, not let through unchecked; bob's call is
			// still checked (and refused for what it carries).
			mustServe("alice crashing lenient", alice, "beta__whoami", map[string]any{"text": "crash"})
			mustServe("alice crashing lenient", alice, "beta__whoami", map[string]any{"text": "crash"})
			mustFail("alice, lenient's circuit open for her", alice, "beta__whoami", map[string]any{"text": "fine"})
			mustFail("bob, checked by lenient", bob, "beta__whoami", map[string]any{"text": "forbidden"})
			mustServe("bob, allowed by lenient", bob, "beta__whoami", map[string]any{"text": "fine"})
		})
	}
	scrape := scrapeAdmin(t, gw)
	for _, want := range []string{
		`mcp_gateway_upstream_circuit_state{upstream="alpha"} 0`,
		`mcp_gateway_upstream_up{upstream="alpha"} 1`,
		`mcp_gateway_interceptor_circuit_state{interceptor="strict"} 0`,
		`mcp_gateway_interceptor_circuit_state{interceptor="lenient"} 0`,
		`mcp_gateway_caller_circuit_events_total{breaker="upstream",event="opened"} 2`,
		`mcp_gateway_caller_circuit_events_total{breaker="upstream",event="refused"} 2`,
		`mcp_gateway_caller_circuit_events_total{breaker="interceptor",event="opened"} 4`,
		`mcp_gateway_caller_circuit_events_total{breaker="interceptor",event="refused"} 4`,
		`mcp_gateway_interceptor_errors_total{interceptor="lenient",reason="caller_circuit_open"} 2`,
	} {
		if !scrape.Has(want + "\n") {
			t.Errorf("the scrape lacks %s", want)
		}
	}
}
