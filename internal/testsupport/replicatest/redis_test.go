package replicatest

import (
	"fmt"
	"net/http"
	"testing"
)

// Load phases of the Redis outage.
const (
	phaseBefore     = "before the outage"
	phaseDown       = "redis down"
	phaseRecovering = "redis restarting"
	phaseAfter      = "after recovery"
)

// outageRequests is how many load requests are sent while Redis is down, so the figures cover
// a real outage rather than the instant of the stop.
const outageRequests = 150

// testRedisOutage stops the shared redis-server under load and starts it again (empty, as a
// Redis without persistence comes back). While it is down, single-use confirmations fail closed
// with a retryable 503 and readiness says why; rate limits fail open by default; afterwards
// everything works again without restarting a gateway.
func testRedisOutage(t *testing.T, c *cluster) {
	loader := c.client(t, "outage-loader")
	loader.http.Transport = loadTransport()
	ld := startLoad(loader, c.lb.mcpURL(), phaseBefore)
	defer ld.finish()
	if err := ld.waitServed(phaseBefore, "", 50); err != nil {
		t.Fatalf("load did not start: %v", err)
	}
	// A confirmation approved before the outage, replayed once Redis is back.
	erin := c.client(t, "erin")
	args := `{"text":"approved before the outage"}`
	before, _ := ask(t, erin, c.replicas[0].mcpURL(), args)
	answer(t, erin, c.replicas[1].mcpURL(), args, before, "approved before the outage")

	ld.setPhase(phaseDown)
	c.redis.Stop()
	whileRedisDown(t, c)
	if err := ld.waitSent(phaseDown, outageRequests); err != nil {
		t.Errorf("load during the outage: %v", err)
	}

	ld.setPhase(phaseRecovering)
	c.redis.Restart()
	c.waitAllUp(t)
	ld.setPhase(phaseAfter)
	if err := ld.waitServed(phaseAfter, "", 50); err != nil {
		t.Errorf("load after recovery: %v", err)
	}
	afterRecovery(t, c)
	ld.finish()
	for _, p := range []string{phaseBefore, phaseDown, phaseRecovering, phaseAfter} {
		t.Logf("load %s: %s", p, ld.snapshot(p))
	}
	for _, p := range []string{phaseBefore, phaseAfter} {
		if got := ld.snapshot(p); got.failed != 0 || got.lost != 0 {
			t.Errorf("load %s: %d failed, %d lost, want none", p, got.failed, got.lost)
		}
	}
	t.Run("confirmation approved before a Redis restart stays single-use", func(t *testing.T) {
		replayAfterRestart(t, c, erin, args, before)
	})
}

// whileRedisDown checks readiness, confirmations and rate limits with Redis stopped.
func whileRedisDown(t *testing.T, c *cluster) {
	t.Helper()
	for _, r := range c.replicas {
		err := waitFor(readyTimeout, func() error {
			status, rd, err := r.readyz()
			if err != nil || status != http.StatusServiceUnavailable || rd.Ready || rd.Checks["redis"] == "" || rd.Checks["redis"] == "ok" {
				return fmt.Errorf("/readyz %d %+v %v", status, rd, err)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s with Redis down: want /readyz 503 with a failing redis check: %v", r.name, err)
		}
	}
	// Readiness drives the balancer: with the shared dependency down, every replica leaves the
	// rotation (docs/scaling.md discusses what that means for fail-open rate limits).
	for _, r := range c.replicas {
		if err := c.lb.waitState(r.name, "DOWN"); err != nil {
			t.Errorf("balancer with Redis down: %v", err)
		}
	}

	c.alpha.Reset()
	frank := c.client(t, "frank")
	args := `{"text":"during the outage"}`
	state, _ := ask(t, frank, c.replicas[0].mcpURL(), args)
	got, err := frank.call(c.replicas[1].mcpURL(), "alpha__echo", args, approve(), state)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != http.StatusServiceUnavailable || got.code() != codeUnavailable || got.Header.Get("Retry-After") == "" {
		t.Errorf("approving with Redis down: want 503 %d with Retry-After, got %s", codeUnavailable, got)
	}
	if n := c.backendCalls("echo"); n != 0 {
		t.Errorf("with Redis down a confirmation reached the backend %d times; it must fail closed", n)
	}
	rateLimitsFailOpen(t, c)
	// Calls that need no shared state are still served by a replica addressed directly.
	if got, err := frank.listTools(c.replicas[2].mcpURL()); err != nil || !got.ok() {
		t.Errorf("tools/list on r3 with Redis down: %v %s", err, got)
	}
}

// rateLimitsFailOpen: with the default configuration a rate limit whose store is down admits
// calls (capacity protection, not security); more than the limit pass.
func rateLimitsFailOpen(t *testing.T, c *cluster) {
	t.Helper()
	gina := c.client(t, "gina")
	statuses := map[int]int{}
	for i := range limitBurst + 1 {
		got, err := gina.call(c.replicas[i%len(c.replicas)].mcpURL(), "alpha__add", `{"a":2,"b":3}`, "", "")
		if err != nil {
			t.Fatal(err)
		}
		statuses[got.Status]++
		if !got.ok() {
			t.Logf("rate-limited call %d with Redis down: %s", i+1, got)
		}
	}
	t.Logf("rate-limited tool with Redis down: %d calls, HTTP statuses %v", limitBurst+1, statuses)
	if statuses[http.StatusOK] != limitBurst+1 {
		t.Errorf("rate limits with Redis down: want all %d calls admitted (fail open by default), got %v", limitBurst+1, statuses)
	}
}

// afterRecovery checks that the gateways use the restarted Redis by themselves.
func afterRecovery(t *testing.T, c *cluster) {
	t.Helper()
	c.alpha.Reset()
	hank := c.client(t, "hank")
	args := `{"text":"after recovery"}`
	state, _ := ask(t, hank, c.replicas[0].mcpURL(), args)
	answer(t, hank, c.replicas[1].mcpURL(), args, state, "after recovery")
	got, err := hank.call(c.replicas[2].mcpURL(), "alpha__echo", args, approve(), state)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != http.StatusBadRequest || got.code() != codeInvalidParams {
		t.Errorf("replay after recovery: want 400 %d, got %s", codeInvalidParams, got)
	}
	if n := c.backendCalls("echo"); n != 1 {
		t.Errorf("after recovery the backend got %d echo calls, want 1", n)
	}
	exhaustLimit(t, c, c.client(t, "ivan"))
}

// replayAfterRestart replays a confirmation approved before Redis restarted. A Redis without
// persistence comes back empty and has forgotten the consumed nonce; the gateway must still
// refuse the replay (gateway confirmations are single-use: SECURITY.md).
func replayAfterRestart(t *testing.T, c *cluster, cl *mcpClient, args, state string) {
	c.alpha.Reset()
	got, err := cl.call(c.replicas[2].mcpURL(), "alpha__echo", args, approve(), state)
	if err != nil {
		t.Fatal(err)
	}
	n := c.backendCalls("echo")
	t.Logf("replay after the Redis restart: %s; backend echo calls %d", got, n)
	if got.Status != http.StatusBadRequest || got.code() != codeInvalidParams || n != 0 {
		t.Errorf("a confirmation consumed before Redis restarted empty was accepted again (HTTP %d, "+
			"backend calls %d): single use only holds while Redis keeps its data; want 400 %d",
			got.Status, n, codeInvalidParams)
	}
}
