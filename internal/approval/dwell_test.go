package approval

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestDwellDoesNotDependOnReplicaClocks: the confirmation step shown by one replica and its
// Approve received by another whose clock is five seconds ahead or behind: the Approve is
// refused at once (a clock ahead does not drop the guard) and counts once a second has passed
// (a clock behind does not refuse it), as with one replica. When the step was shown is kept by
// the shared store, whose clock alone measures the second.
func TestDwellDoesNotDependOnReplicaClocks(t *testing.T) {
	for _, skew := range []time.Duration{5 * time.Second, -5 * time.Second} {
		t.Run(skew.String(), func(t *testing.T) {
			f := newPageFixture(t)
			_, ring := storeAndKeys(t, time.Now) // the same keys as the fixture's replica
			other, err := New(f.svc.cfg, Deps{Store: f.store, Keys: ring, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Clock: func() time.Time { return f.clock.now().Add(skew) }, Observer: &countingObserver{refusals: map[string]int{}},
				HTTPClient: f.idp.client(2 * time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			_, page, c, body := f.signedIn(t)
			status, step := f.postDecision(t, c, page, url.Values{"decision": {"approve"}, "csrf": {csrfOf(t, body)}})
			if status != http.StatusOK || !strings.Contains(step, `value="confirm"`) {
				t.Fatalf("Approve: %d\n%s", status, step)
			}
			confirm := url.Values{"decision": {"confirm"}, "csrf": {csrfOf(t, step)}}
			f.srv.Config.Handler = other // the confirmation's Approve reaches the other replica
			if status, got := f.postDecision(t, c, page, confirm); status != http.StatusConflict || !strings.Contains(got, "less than a second after") {
				t.Errorf("Approve at once on a replica %s off: %d, want 409, too soon", skew, status)
			}
			f.clock.advance(MinDwell)
			if status, got := f.postDecision(t, c, page, confirm); status != http.StatusOK || !strings.Contains(got, `class="outcome outcome-approved"`) {
				t.Errorf("Approve a second later on a replica %s off: %d, want it recorded", skew, status)
			}
		})
	}
}
