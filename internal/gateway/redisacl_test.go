package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestRedisRefusingScriptsByACL: a Redis whose ACL refuses the gateway the scripts it runs
// (NOPERM, as after an ACL change that dropped +evalsha +eval) answers, so its circuit breaker
// stays closed, but every write that needs a script fails: a confirmation's answer fails closed
// (503 -32014, Retry-After: 1, the backend not called), a rate-limited call fails open, and
// once the ACL allows the scripts again the same answer is taken, once, with no restart.
func TestRedisRefusingScriptsByACL(t *testing.T) {
	iss := newIssuer(t)
	rs := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Redis.URL = rs.URL()
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "echo-confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			{ID: "rest", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}, RateLimit: "100000/m"},
		}
		c.RateLimit.Lease = 1 // every call asks Redis
	}, alpha)
	alice := mintFor(t, iss, "alice")
	_, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, "")
	if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("expected a confirmation, got %+v", r)
	}
	state := r.Result.RequestState

	// testredis.Do authenticates as default too; ACL changes apply to its open connections.
	if _, err := rs.Do("ACL", "SETUSER", "default", "-evalsha", "-eval"); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Do("EVAL", "return 1", "0"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("Redis still runs scripts: %v", err)
	}
	alpha.Reset()
	h := modernHeaders("tools/call", "alpha__echo")
	h.Set("Authorization", "Bearer "+alice)
	status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", h,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+elicitMeta+`,"name":"alpha__echo","arguments":{"text":"pay 10"}`+approve(state)+`}}`)
	if status != 503 || hdr.Get("Retry-After") != "1" || !strings.Contains(body, "-32014") {
		t.Errorf("confirmation answered with scripts refused: %d, Retry-After %q: %.200s", status, hdr.Get("Retry-After"), body)
	}
	if status, r := rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, ""); status != 200 || r.Error != nil {
		t.Errorf("rate-limited call with scripts refused: %d %+v, want fail-open 200", status, r)
	}
	if got := toolCalls(alpha); got != 1 {
		t.Fatalf("backend calls with scripts refused = %d, want the fail-open call's 1", got)
	}
	if s := metricValue(t, gw, "mcp_gateway_redis_circuit_state"); s != 0 {
		t.Errorf("circuit state with Redis answering NOPERM = %v, want 0 (closed): it answered", s)
	}

	if _, err := rs.Do("ACL", "SETUSER", "default", "+@all"); err != nil {
		t.Fatal(err)
	}
	alpha.Reset()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, r = rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state))
		if r.Error == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.Error != nil || r.Result.IsError || toolCalls(alpha) != 1 {
		t.Fatalf("the confirmation once scripts are allowed again: %+v, backend calls %d", r, toolCalls(alpha))
	}
	if _, r = rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)); r.Error == nil || toolCalls(alpha) != 1 {
		t.Fatalf("the same confirmation again: %+v, backend calls %d; want it refused", r, toolCalls(alpha))
	}
}
