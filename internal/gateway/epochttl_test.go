package gateway

import (
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestConfirmationReplayAfterRedisLossAcrossTTLs: two gateways share Redis during a rolling
// update that shortens mrtr.ttl, A still at 10 minutes, B at one. A confirmation asked and
// approved on A, then replayed on B after Redis lost its data (FLUSHALL), is refused (400
// -32602) and the backend runs the call once. B used to read the state's issue time as its
// expiry less B's own mrtr.ttl, 9 minutes after the real one and so after the loss, and ran
// the call a second time.
func TestConfirmationReplayAfterRedisLossAcrossTTLs(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	redis := testredis.Start(t)
	replica := func(ttl time.Duration) Listeners {
		return startTestGateway(t, func(c *Config) {
			trustIssuers(c, iss)
			c.MRTR.Keys = testKeys
			c.MRTR.TTL = ttl
			c.Redis.URL = redis.URL()
			c.Auth.Policy.Rules = []authz.RuleConfig{
				{ID: "confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm}}
		}, alpha)
	}
	a, b := replica(10*time.Minute), replica(time.Minute)
	alice := mintFor(t, iss, "alice")
	state := askConfirmation(t, a, alice)
	if _, r := rawCall(t, a, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)); r.Error != nil || r.Result.IsError {
		t.Fatalf("approved on A: %+v", r)
	}
	if _, err := redis.Do("FLUSHALL"); err != nil {
		t.Fatal(err)
	}
	if status, r := rawCall(t, b, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)); status != 400 || r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("replayed on B after Redis lost its data: %d %+v, want 400 -32602", status, r)
	}
	if n := toolCalls(alpha); n != 1 {
		t.Errorf("backend ran the call %d times, want once", n)
	}
}
