package replicatest

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testLeasedRateLimit drives the leased limit (limitLeased) from a full bucket through all three
// replicas at once, each worker calling until it is refused, and counts what was admitted.
// docs/scaling.md bounds it: the limit (burst plus what refilled while the test ran) plus one
// lease per replica. Leases are paid for in Redis before they are spent, so from a full bucket
// with no lease outstanding the count cannot pass even the limit itself; and a replica refuses
// only once its lease is spent and the shared bucket is empty, so leasing does not starve the
// caller either: at least the burst less one lease per replica is admitted.
func testLeasedRateLimit(t *testing.T, c *cluster) {
	c.alpha.Reset()
	cl := c.client(t, "lena")
	const workersPerReplica = 3
	var admitted, refused, other atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range workersPerReplica * len(c.replicas) {
		r := c.replicas[i%len(c.replicas)]
		wg.Go(func() {
			// Bounded: the burst plus refill, with a wide margin, is far below this.
			for range 4 * leasedBurst {
				got, err := cl.call(r.mcpURL(), "alpha__whoami", `{}`, "", "")
				switch {
				case err != nil:
					t.Errorf("%s: %v", r.name, err)
					return
				case got.ok():
					admitted.Add(1)
				case got.Status == http.StatusTooManyRequests && got.code() == codeRateLimited:
					refused.Add(1)
					return
				default:
					other.Add(1)
					t.Errorf("%s: want 200 or 429 %d, got %s", r.name, codeRateLimited, got)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	refill := int64(elapsed/leasedRefill) + 1
	limit := leasedBurst + refill
	bound := limit + int64(len(c.replicas))*leasedLease
	got := admitted.Load()
	t.Logf("leased limit %s through %d replicas in %v: %d admitted, %d workers refused; limit %d, documented bound %d, backend calls %d",
		limitLeased, len(c.replicas), elapsed.Round(time.Millisecond), got, refused.Load(), limit, bound, c.backendCalls("whoami"))
	if got > bound {
		t.Errorf("admitted %d calls, over the documented bound %d (limit %d + %d replicas × lease %d)",
			got, bound, limit, len(c.replicas), leasedLease)
	}
	if got > limit {
		t.Errorf("admitted %d calls from a full bucket, over the limit %d: a lease was spent without being paid for", got, limit)
	}
	if floor := int64(leasedBurst - len(c.replicas)*leasedLease); got < floor {
		t.Errorf("admitted %d calls, fewer than the burst less one lease per replica (%d)", got, floor)
	}
	if n := int64(c.backendCalls("whoami")); n != got {
		t.Errorf("backend got %d whoami calls, want the %d admitted", n, got)
	}
}
