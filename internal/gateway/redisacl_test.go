package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestRedisRefusingScriptsByACL: a Redis whose ACL refuses the gateway the scripts it runs
// (NOPERM, as after an ACL change that dropped +evalsha +eval) answers, so its circuit breaker
// stays closed, but every write that needs a script fails: a confirmation's answer fails closed
// (503 -32014, Retry-After: 1, the backend not called), a rate-limited call fails open, and
// once the ACL allows the scripts again the same answer is taken, once, with no restart.
// Meanwhile /readyz is 503 and its redis check names the refusal, as for a Redis that refuses
// the gateway's keys or writes: it used to say ready, since its check wrote and read a key but
// ran no script.
func TestRedisRefusingScriptsByACL(t *testing.T) {
	iss := newIssuer(t)
	rs := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) { redisBackedCalls(c, iss, rs.URL()) }, alpha)
	alice := mintFor(t, iss, "alice")
	state := askEchoConfirmation(t, gw, alice)

	// testredis.Do authenticates as default too; ACL changes apply to its open connections.
	if _, err := rs.Do("ACL", "SETUSER", "default", "-evalsha", "-eval"); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Do("EVAL", "return 1", "0"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("Redis still runs scripts: %v", err)
	}
	alpha.Reset()
	answerFailsClosed(t, gw, alice, state, "with scripts refused")
	if status, r := rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, ""); status != 200 || r.Error != nil {
		t.Errorf("rate-limited call with scripts refused: %d %+v, want fail-open 200", status, r)
	}
	if got := toolCalls(alpha); got != 1 {
		t.Fatalf("backend calls with scripts refused = %d, want the fail-open call's 1", got)
	}
	if s := metricValue(t, gw, "mcp_gateway_redis_circuit_state"); s != 0 {
		t.Errorf("circuit state with Redis answering NOPERM = %v, want 0 (closed): it answered", s)
	}
	if status, body := readyz(t, gw); status != http.StatusServiceUnavailable || !strings.Contains(body.Checks["redis"], "NOPERM") {
		t.Errorf("/readyz with scripts refused: %d %+v, want 503 with the redis check naming NOPERM", status, body)
	}

	if _, err := rs.Do("ACL", "SETUSER", "default", "+@all"); err != nil {
		t.Fatal(err)
	}
	if status, body := readyz(t, gw); status != http.StatusOK || body.Checks["redis"] != "ok" {
		t.Errorf("/readyz once scripts are allowed again: %d %+v, want 200", status, body)
	}
	answerTakenOnce(t, gw, alice, alpha, state, "once scripts are allowed again")
}
