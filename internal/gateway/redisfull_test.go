package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestRedisFullFailsAsDocumented: a Redis that answers but refuses every write (maxmemory
// reached under noeviction: "OOM command not allowed") is a Redis that cannot be used, and each
// operation of README's "what fails how" table behaves as it says for one: an answer to a
// confirmation and an ask for the approval page fail closed (503 -32014, Retry-After: 1, the
// backend not called), a rate-limited call fails open; once Redis has room again the same
// answer is taken, once.
func TestRedisFullFailsAsDocumented(t *testing.T) {
	iss := newIssuer(t)
	rs := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Redis.URL = rs.URL()
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "echo-confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			{ID: "page", Upstream: "alpha", Tools: []string{"ask_name"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmURL},
			{ID: "rest", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}, RateLimit: "100000/m"},
		}
		c.Approval.ClientID = "gateway-approval"
		c.RateLimit.Lease = 1 // every call asks Redis
	}, alpha)
	alice := mintFor(t, iss, "alice")
	_, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, "")
	if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("expected a confirmation, got %+v", r)
	}
	state := r.Result.RequestState

	for _, args := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}} {
		if _, err := rs.Do(args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rs.Do("SET", "probe", "x"); err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("Redis still takes writes: %v", err)
	}
	alpha.Reset()
	h := modernHeaders("tools/call", "alpha__echo")
	h.Set("Authorization", "Bearer "+alice)
	status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", h,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+elicitMeta+`,"name":"alpha__echo","arguments":{"text":"pay 10"}`+approve(state)+`}}`)
	if status != 503 || hdr.Get("Retry-After") != "1" || !strings.Contains(body, "-32014") {
		t.Errorf("confirmation answered with Redis full: %d, Retry-After %q: %.200s", status, hdr.Get("Retry-After"), body)
	}
	status, ask := callWithMeta(t, gw, alice, urlElicitMeta, "alpha__ask_name", `{}`, "")
	if status != 503 || ask.Error == nil || ask.Error.Code != -32014 || ask.Result.ResultType == "input_required" {
		t.Errorf("approval page asked with Redis full: %d %+v %+v", status, ask.Error, ask.Result)
	}
	if toolCalls(alpha) != 0 {
		t.Fatal("a call that needed Redis reached the backend while Redis was full")
	}
	if status, r := rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, ""); status != 200 || r.Error != nil {
		t.Errorf("rate-limited call with Redis full: %d %+v, want fail-open 200", status, r)
	}

	if _, err := rs.Do("CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	alpha.Reset()
	deadline := time.Now().Add(30 * time.Second) // the store's breaker may have opened
	for {
		_, r = rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state))
		if r.Error == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.Error != nil || r.Result.IsError || toolCalls(alpha) != 1 {
		t.Fatalf("the confirmation once Redis has room: %+v, backend calls %d", r, toolCalls(alpha))
	}
	if _, r = rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)); r.Error == nil || toolCalls(alpha) != 1 {
		t.Fatalf("the same confirmation again: %+v, backend calls %d; want it refused", r, toolCalls(alpha))
	}
}
