package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// redisBackedCalls configures the two ways a tools/call needs Redis, for the tests of a Redis
// that misbehaves: alpha's echo asks a form confirmation (single use recorded in Redis) and every
// other alpha tool is rate limited with no lease, so each call asks Redis. extra rules go before
// the catch-all one.
func redisBackedCalls(c *Config, iss *devissuer.Issuer, redisURL string, extra ...authz.RuleConfig) {
	trustIssuers(c, iss)
	c.MRTR.Keys = testKeys
	c.Redis.URL = redisURL
	c.Auth.Policy.Rules = append(append([]authz.RuleConfig{
		{ID: "echo-confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
	}, extra...),
		authz.RuleConfig{ID: "rest", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}, RateLimit: "100000/m"})
	c.RateLimit.Lease = 1 // every call asks Redis
}

// askEchoConfirmation calls alpha__echo on gw and returns the confirmation's requestState.
func askEchoConfirmation(t *testing.T, gw Listeners, tok string) string {
	t.Helper()
	_, r := rawCall(t, gw, tok, "alpha__echo", `{"text":"pay 10"}`, "")
	if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("expected a confirmation, got %+v", r)
	}
	return r.Result.RequestState
}

// answerFailsClosed answers the echo confirmation state and wants what README promises when
// single use cannot be recorded: 503, -32014 and Retry-After: 1.
func answerFailsClosed(t *testing.T, gw Listeners, tok, state, while string) {
	t.Helper()
	h := modernHeaders("tools/call", "alpha__echo")
	h.Set("Authorization", "Bearer "+tok)
	status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", h,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+elicitMeta+`,"name":"alpha__echo","arguments":{"text":"pay 10"}`+approve(state)+`}}`)
	if status != 503 || hdr.Get("Retry-After") != "1" || !strings.Contains(body, "-32014") {
		t.Errorf("confirmation answered %s: %d, Retry-After %q: %.200s", while, status, hdr.Get("Retry-After"), body)
	}
}

// answerTakenOnce answers the echo confirmation state until it is taken (the store's breaker
// may still be open when Redis has just recovered), then wants it taken once: the backend
// called once, and the same answer again refused.
func answerTakenOnce(t *testing.T, gw Listeners, tok string, alpha *mcptest.Server, state, when string) {
	t.Helper()
	alpha.Reset()
	var r rpcResult
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, r = rawCall(t, gw, tok, "alpha__echo", `{"text":"pay 10"}`, approve(state))
		if r.Error == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.Error != nil || r.Result.IsError || toolCalls(alpha) != 1 {
		t.Fatalf("the confirmation %s: %+v, backend calls %d", when, r, toolCalls(alpha))
	}
	if _, r = rawCall(t, gw, tok, "alpha__echo", `{"text":"pay 10"}`, approve(state)); r.Error == nil || toolCalls(alpha) != 1 {
		t.Fatalf("the same confirmation again: %+v, backend calls %d; want it refused", r, toolCalls(alpha))
	}
}
