package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// olderEras are the pre-2026 revisions before 2025-11-25 that the pre-2026 edge serves by
// default, each pinned by the go-sdk client (clientEras has the two newer ones).
var olderEras = []string{"2025-06-18", "2025-03-26"}

// TestInterceptorsOlderEras: clients of 2025-06-18 and 2025-03-26 (the go-sdk pinned to each,
// and the TypeScript SDK 1.12.3, whose latest revision is 2025-03-26) are governed by the
// interceptors as newer clients are: an allowed call reaches the backend; a refusal shows the
// interceptor's reason and reaches nothing; a mutation into a tool the policy denies is
// refused and never forwarded, one into a tool the caller may call is forwarded as that tool;
// an interceptor that fails refuses the call (fail-closed).
//
// The same run holds the interceptors' metrics and audit lines to what docs/interceptors.md
// promises: per interceptor, the invocations by result (allowed, denied, mutated, error), the
// errors by reason and the duration of each invocation; one audit line per invocation with the
// request id, interceptor, rule, phase, method, backend, name, decision, reason, enforced and
// duration, and no argument value, interceptor message or token anywhere in the log.
func TestInterceptorsOlderEras(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	rename := rewrites(map[string]string{
		`"alpha__echo","arguments":{"text":"to-fail"}`:      `"alpha__fail","arguments":{}`,
		`"alpha__echo","arguments":{"text":"hello legacy"}`: `"alpha__fail","arguments":{}`, // the TS client's echo
		`"alpha__echo","arguments":{"text":"to-add"}`:       `"alpha__add","arguments":{"a":2,"b":3}`,
		`"alpha__echo","arguments":{"text":"batch two"}`:    `"alpha__fail","arguments":{}`, // in the TS client's batch
	})
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "guard", Type: intercept.TypeValidation, Handle: intercepttest.DenyIf("forbidden", "no forbidden words, please")},
		{Name: "rename", Type: intercept.TypeMutation, Handle: rename},
		{Name: "broken", Type: intercept.TypeValidation, Handle: func(context.Context, *intercepttest.Invocation) (json.RawMessage, error) {
			return nil, errors.New("the policy engine is down")
		}},
	})
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "no-fail", Upstream: "*", Tools: []string{"fail"}, Effect: "deny"},
			{ID: "read", Upstream: "alpha", Tools: []string{"echo", "add", "fail", "whoami"}, AnyScope: []string{"tools:read"}},
		}
		guard := interceptorEntry("guard", ics.URL(), intercept.TypeValidation, []string{"echo", "add"}, "request")
		guard.ShowReason = true
		c.Interceptors = []InterceptorConfig{guard,
			interceptorEntry("rename", ics.URL(), intercept.TypeMutation, []string{"echo"}, "request"),
			interceptorEntry("broken", ics.URL(), intercept.TypeValidation, []string{"whoami"}, "request")}
	}, alpha)
	tok := mint(t, iss, devissuer.Claims{"sub": "reader", "scope": "tools:read"})
	for _, era := range olderEras {
		t.Run(era, func(t *testing.T) {
			cs := connectEra(t, gw, era, mcptest.WithBearer(tok))
			if got := cs.InitializeResult().ProtocolVersion; got != era {
				t.Fatalf("negotiated %s", got)
			}
			checkInterceptedEra(t, cs, alpha)
		})
	}
	t.Run("typescript-sdk-"+legacyclient.TS0326Version, func(t *testing.T) {
		alpha.Reset()
		steps := legacyclient.RunTS0326(t, legacyclient.Scenario0326{URL: "http://" + gw.MCP + "/mcp", Token: tok,
			Tools: legacyclient.Tools0326{Echo: "alpha__echo", Add: "alpha__add"}, Steps: []string{"connect", "call_tool", "structured", "batch", "close"}})
		if st := steps["connect"]; !st.OK || st.ProtocolVersion != legacyclient.Protocol20250326 {
			t.Fatalf("connect: %+v", st)
		}
		if st := steps["call_tool"]; !st.OK || !st.IsError || !strings.Contains(st.Text, "one this caller may not make") {
			t.Errorf("echo mutated into a denied tool: %+v", st)
		}
		if st := steps["structured"]; !st.OK || st.IsError || !strings.HasPrefix(st.Text, "5") {
			t.Errorf("an allowed call: %+v", st)
		}
		// Each message of a batch is intercepted as if sent alone.
		batch := steps["batch"].Batch
		if one, two := batch["b1"], batch["b2"]; one.Error != nil || !strings.Contains(string(one.Result), "batch one") ||
			two.Error != nil || !strings.Contains(string(two.Result), "one this caller may not make") || toolCalls(alpha) != 2 {
			t.Errorf("the batch: %+v; backend calls %d", steps["batch"], toolCalls(alpha))
		}
	})
	checkInterceptorMetrics(t, gw, len(olderEras))
	stop()
	checkInterceptorAudit(t, logs.String(), tok)
}

// checkInterceptedEra makes the calls of TestInterceptorsOlderEras through cs and checks what
// the caller and the backend see.
func checkInterceptedEra(t *testing.T, cs *mcp.ClientSession, alpha *mcptest.Server) {
	t.Helper()
	alpha.Reset()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return res
	}
	if res := call("alpha__echo", map[string]any{"text": "hello"}); res.IsError || mcptest.ResultText(res) != "hello" || toolCalls(alpha) != 1 {
		t.Fatalf("allowed: %+v; backend calls %d", res, toolCalls(alpha))
	}
	res := call("alpha__echo", map[string]any{"text": "a forbidden word"})
	if text := mcptest.ResultText(res); !res.IsError || !strings.Contains(text, "refused by the gateway's interceptor guard") ||
		!strings.Contains(text, "Reason: no forbidden words, please") || toolCalls(alpha) != 1 {
		t.Fatalf("refused: %+v; backend calls %d", res, toolCalls(alpha))
	}
	if res := call("alpha__echo", map[string]any{"text": "to-fail"}); !res.IsError ||
		!strings.Contains(mcptest.ResultText(res), "one this caller may not make") || toolCalls(alpha) != 1 {
		t.Fatalf("mutated into a denied tool: %+v; backend calls %d", res, toolCalls(alpha))
	}
	// 2025-03-26 has no structuredContent: the gateway adds it to the content as text.
	if res := call("alpha__echo", map[string]any{"text": "to-add"}); res.IsError || !strings.HasPrefix(mcptest.ResultText(res), "5") {
		t.Fatalf("mutated into an allowed tool: %+v", res)
	}
	if calls := alpha.RequestsOf("tools/call"); len(calls) != 2 || calls[1].Header.Get("Mcp-Name") != "add" ||
		!strings.Contains(string(calls[1].Body), `"name":"add"`) {
		t.Fatalf("the backend received %+v", calls)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__whoami"}); !couldNotDecide(err) || toolCalls(alpha) != 2 {
		t.Fatalf("a failing interceptor: %v; backend calls %d", err, toolCalls(alpha))
	}
}

// checkInterceptorMetrics checks the scrape after eras runs of checkInterceptedEra and one of
// the TypeScript client. The validators of a pass see the call as the mutators left it, and a
// call renamed into another tool is planned again, so guard decides per era: hello, the
// forbidden word (denied), to-fail as the fail call it became, to-add as add and again as the
// add call it became; and of the TypeScript client: its echo (as fail), its add and the two
// calls of its batch (the second as fail). rename decides every echo: per era four, two of them
// mutated; of the TypeScript client three, two mutated.
func checkInterceptorMetrics(t *testing.T, gw Listeners, eras int) {
	t.Helper()
	scrape := scrapeAdmin(t, gw)
	for _, want := range []string{
		fmt.Sprintf(`mcp_gateway_interceptor_calls_total{interceptor="guard",phase="request",result="allowed"} %d`, 4*eras+4),
		fmt.Sprintf(`mcp_gateway_interceptor_calls_total{interceptor="guard",phase="request",result="denied"} %d`, eras),
		fmt.Sprintf(`mcp_gateway_interceptor_duration_seconds_count{interceptor="guard",phase="request"} %d`, 5*eras+4),
		fmt.Sprintf(`mcp_gateway_interceptor_calls_total{interceptor="rename",phase="request",result="mutated"} %d`, 2*eras+2),
		fmt.Sprintf(`mcp_gateway_interceptor_duration_seconds_count{interceptor="rename",phase="request"} %d`, 4*eras+3),
		fmt.Sprintf(`mcp_gateway_interceptor_calls_total{interceptor="broken",phase="request",result="error"} %d`, eras),
		fmt.Sprintf(`mcp_gateway_interceptor_errors_total{interceptor="broken",reason="error"} %d`, eras),
		fmt.Sprintf(`mcp_gateway_interceptor_duration_seconds_count{interceptor="broken",phase="request"} %d`, eras),
	} {
		if !scrape.Has(want + "\n") {
			t.Errorf("the scrape lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("the interceptor series:\n%s", grepLines(scrape.Text(), "mcp_gateway_interceptor_"))
	}
}

// checkInterceptorAudit checks the audit lines of TestInterceptorsOlderEras: each decision has
// its line with every field the documentation lists, and no value of the calls reached the log.
func checkInterceptorAudit(t *testing.T, out, tok string) {
	t.Helper()
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil || line["msg"] != "interceptor" {
			continue
		}
		decision, _ := line["decision"].(string)
		seen[decision] = true
		for _, key := range []string{"request_id", "interceptor", "rule", "phase", "method", "upstream", "name", "reason", "enforced", "duration"} {
			if _, ok := line[key]; !ok {
				t.Errorf("an audit line lacks %s: %s", key, sc.Text())
			}
		}
		if line["rule"] == "" || line["request_id"] == "" || line["upstream"] != "alpha" || line["method"] != "tools/call" || line["enforced"] != true {
			t.Errorf("audit line %s", sc.Text())
		}
		if (decision == intercept.ResultError) != (line["reason"] == intercept.ReasonRPCError) {
			t.Errorf("audit line %s: the reason does not match the decision", sc.Text())
		}
	}
	for _, d := range []string{intercept.ResultAllowed, intercept.ResultDenied, intercept.ResultMutated, intercept.ResultError} {
		if !seen[d] {
			t.Errorf("no audit line with the decision %s", d)
		}
	}
	for _, value := range []string{"forbidden", "no forbidden words", "to-fail", "to-add", "hello legacy", "batch two", "policy engine is down", tok} {
		if strings.Contains(out, value) {
			t.Errorf("%q, a value, the interceptor's words or the token, reached the log", value)
		}
	}
}
