package approval

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestIssuerOutage: while the identity provider hangs, sign-ins degrade as token verification
// does. Concurrent sign-ins share one discovery attempt, and after it fails no other is made
// until the retry interval has passed; every one of them gets a page saying the identity
// provider cannot be reached, 503 with Retry-After. Once the provider answers again, sign-in
// works.
func TestIssuerOutage(t *testing.T) {
	f := newPageFixture(t)
	_, page := f.ask(t, realop.UserID, `{"path":"/tmp/x"}`)
	f.idp.down.Store(true)
	wave := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				c := f.browser(t)
				c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
				resp, err := c.Get(page)
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
				if resp.StatusCode != http.StatusServiceUnavailable || secs < 1 ||
					!strings.Contains(string(body), "identity provider") || !strings.Contains(string(body), f.op.Issuer()) {
					t.Errorf("sign-in with the provider down: %d Retry-After %q\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
				}
			})
		}
		wg.Wait()
	}
	wave(8)
	if n := f.idp.attempts.Load(); n != 1 {
		t.Errorf("8 concurrent sign-ins made %d discovery attempts, want 1", n)
	}
	wave(8)
	if n := f.idp.attempts.Load(); n != 1 {
		t.Errorf("sign-ins within the retry interval made %d more attempts, want none", n-1)
	}
	if n := f.obs.refused(RefusedIssuerDown); n != 16 {
		t.Errorf("%d refusals counted as issuer_unavailable, want 16", n)
	}
	// The provider is back, and the retry interval is over: sign-in works.
	f.idp.down.Store(false)
	f.clock.advance(5 * time.Second)
	c := f.browser(t)
	if resp, body := f.signIn(t, c, page, f.op.Username()); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Approve this tool call?") {
		t.Fatalf("sign-in after the outage: %d\n%s", resp.StatusCode, body)
	}
}
