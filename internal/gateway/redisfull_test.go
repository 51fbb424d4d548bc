package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestRedisFullFailsAsDocumented: a Redis that answers but refuses every write (maxmemory
// reached under noeviction: "OOM command not allowed") is a Redis that cannot be used, and each
// operation of README's "what fails how" table behaves as it says for one: an answer to a
// confirmation and an ask for the approval page fail closed (503 -32014, Retry-After: 1, the
// backend not called), a rate-limited call fails open, /readyz is 503 naming the refusal; once
// Redis has room again the replica is ready and the same answer is taken, once.
func TestRedisFullFailsAsDocumented(t *testing.T) {
	iss := newIssuer(t)
	rs := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		redisBackedCalls(c, iss, rs.URL(),
			authz.RuleConfig{ID: "page", Upstream: "alpha", Tools: []string{"ask_name"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmURL})
		c.Approval.ClientID = "gateway-approval"
	}, alpha)
	alice := mintFor(t, iss, "alice")
	state := askEchoConfirmation(t, gw, alice)

	for _, args := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}} {
		if _, err := rs.Do(args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rs.Do("SET", "probe", "x"); err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("Redis still takes writes: %v", err)
	}
	alpha.Reset()
	answerFailsClosed(t, gw, alice, state, "with Redis full")
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
	if status, body := readyz(t, gw); status != http.StatusServiceUnavailable || !strings.Contains(body.Checks["redis"], "OOM") {
		t.Errorf("/readyz with Redis full: %d %+v, want 503 with the redis check naming OOM", status, body)
	}

	if _, err := rs.Do("CONFIG", "SET", "maxmemory", "0"); err != nil {
		t.Fatal(err)
	}
	if status, body := readyz(t, gw); status != http.StatusOK {
		t.Errorf("/readyz once Redis has room: %d %+v, want 200", status, body)
	}
	answerTakenOnce(t, gw, alice, alpha, state, "once Redis has room")
}
