package gateway

import (
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestRedisConnectionsKilled: Redis closing every connection of two replicas (CLIENT KILL of
// the normal and the pub/sub ones, as an operator, a proxy or a Redis restart without data
// loss does) costs no request: a confirmation issued on one replica is answered on the other
// once, exactly once, and a rate-limited call is served, with the replicas reconnecting by
// themselves.
func TestRedisConnectionsKilled(t *testing.T) {
	iss := newIssuer(t)
	rs := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	start := func() Listeners {
		return startTestGateway(t, func(c *Config) { redisBackedCalls(c, iss, rs.URL()) }, alpha)
	}
	a, b := start(), start()
	alice := mintFor(t, iss, "alice")
	for _, gw := range []Listeners{a, b} {
		if status, r := rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, ""); status != 200 || r.Error != nil {
			t.Fatalf("with Redis up: %d %+v", status, r)
		}
	}
	state := askEchoConfirmation(t, a, alice)

	for _, kind := range []string{"normal", "pubsub"} {
		n, err := rs.Do("CLIENT", "KILL", "TYPE", kind)
		if err != nil {
			t.Fatalf("CLIENT KILL TYPE %s: %v", kind, err)
		}
		if kind == "normal" && n == "0" { // the kill's own connection is not counted
			t.Fatalf("CLIENT KILL TYPE normal closed %s connections: the replicas held none", n)
		}
	}
	alpha.Reset()
	if status, r := rawCall(t, b, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)); status != 200 || r.Error != nil || r.Result.IsError {
		t.Fatalf("the confirmation answered on the other replica after its connections were killed: %d %+v", status, r)
	}
	if _, r := rawCall(t, a, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)); r.Error == nil {
		t.Fatalf("the same answer again on the first replica: %+v, want refused", r)
	}
	if got := toolCalls(alpha); got != 1 {
		t.Fatalf("the backend got %d calls for one confirmation, want 1", got)
	}
	for _, gw := range []Listeners{a, b} {
		if status, r := rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, ""); status != 200 || r.Error != nil {
			t.Fatalf("a rate-limited call after the connections were killed: %d %+v", status, r)
		}
	}
	if got := metricValue(t, a, `mcp_gateway_redis_errors_total{op="rate_limit"}`) +
		metricValue(t, b, `mcp_gateway_redis_errors_total{op="rate_limit"}`); got != 0 {
		t.Errorf("%v rate-limit store errors across killed connections, want 0 (a dead pooled connection is replaced)", got)
	}
}
