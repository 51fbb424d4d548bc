package replicatest

import (
	"net/http"
	"syscall"
	"testing"
)

// requestsPerStep is how many successful requests the restarted replica must serve before the
// next replica is restarted: proof it is back in rotation, not just up.
const requestsPerStep = 20

// testRollingRestart restarts the replicas one at a time, with SIGTERM as Kubernetes sends it,
// under a steady load through the balancer. The drain sequence (not ready, keep serving for
// drainDelay, then stop accepting and finish in-flight calls) must lose and fail nothing.
func testRollingRestart(t *testing.T, c *cluster) {
	const phase = "rolling restart"
	loader := c.client(t, "loader")
	loader.http.Transport = loadTransport()
	ld := startLoad(loader, c.lb.mcpURL(), phase)
	defer ld.finish()
	if err := ld.waitServed(phase, "", 50); err != nil {
		t.Fatalf("load did not start: %v", err)
	}
	for _, r := range c.replicas {
		restartOne(t, c, r)
		if err := ld.waitServed(phase, r.name, requestsPerStep); err != nil {
			t.Fatalf("%s back in rotation: %v", r.name, err)
		}
	}
	ld.finish()
	got := ld.snapshot(phase)
	t.Logf("rolling restart of %d replicas, %d clients: %s", len(c.replicas), loadWorkers, got)
	if got.failed != 0 || got.lost != 0 || got.ok != got.sent {
		t.Errorf("rolling restart: %d failed and %d lost of %d requests, want none", got.failed, got.lost, got.sent)
	}
}

// restartOne drains r with SIGTERM, checks the balancer took it out of rotation while it was
// still serving (the point of drainDelay), and starts it again on the same ports.
func restartOne(t *testing.T, c *cluster, r *replica) {
	t.Helper()
	p := r.proc
	p.signal(syscall.SIGTERM)
	if err := c.lb.waitState(r.name, "DOWN"); err != nil {
		t.Fatalf("balancer never marked draining %s down: %v", r.name, err)
	}
	if p.exited() {
		t.Errorf("%s exited before the balancer marked it down: drainDelay %v is too short for checks every %v",
			r.name, drainDelay, checkInterval)
	}
	if status, rd, err := r.readyz(); err == nil && (status != http.StatusServiceUnavailable || !rd.Draining) {
		t.Errorf("%s while draining: /readyz %d %+v, want 503 draining", r.name, status, rd)
	}
	if err := p.wait(syscall.SIGTERM); err != nil {
		t.Fatalf("%s after SIGTERM: %v, want a clean exit", r.name, err)
	}
	r.proc = nil
	r.start(t)
	if err := c.lb.waitState(r.name, "UP"); err != nil {
		t.Fatalf("balancer: %v", err)
	}
}
