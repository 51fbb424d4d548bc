package useroauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/flighttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// A caller that found no metadata while another's discovery was under way, and reached the
// flight only after it failed, is given that failure: the authorization server is asked once
// per metadataRetry, not once more.
func TestDiscoveryFlightAfterAnotherFailed(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer as.Close()
	x := &discoverer{b: &Backend{Name: "alpha", AuthServer: as.URL, Scopes: []string{"read"}}, client: as.Client(), now: time.Now}

	var second error
	var once int64
	first := flighttest.HeldFirst(&x.beforeFlight,
		func() error { _, err := x.get(context.Background()); return err },
		func() {
			_, second = x.get(context.Background())
			once = requests.Load()
		})
	if !errors.Is(first, ErrAuthServer) || !errors.Is(second, ErrAuthServer) {
		t.Fatalf("errors %v and %v, want ErrAuthServer", first, second)
	}
	if n := requests.Load(); once == 0 || n != once {
		t.Fatalf("%d requests to the authorization server, want the %d of one discovery", n, once)
	}
}

// A caller that found no registered client while another's registration was under way, and
// reached the flight only after it ended, is given that registration's client, or its failure
// within the cooldown: the authorization server sees one registration, not two (each would be
// an orphan client there, or one more request to a server that refused).
func TestRegistrationFlightAfterAnotherEnded(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"", "refuse"} {
		t.Run("mode="+mode, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{registration: RegistrationDynamic, authServer: realop.AuthServerOptions{Registration: true}})
			if mode != "" {
				f.asLink.register.Store(&mode)
			}
			st := f.svc.backends[backendName]
			var firstID, secondID string
			var secondErr error
			firstErr := flighttest.HeldFirst(&f.svc.oauth.beforeFlight,
				func() error { _, c, err := f.svc.serverAndClient(context.Background(), st); firstID = c.ID; return err },
				func() { _, c, err := f.svc.serverAndClient(context.Background(), st); secondID, secondErr = c.ID, err })
			if (mode == "") != (secondErr == nil) || (mode == "") != (firstErr == nil) || firstID != secondID {
				t.Fatalf("first %q, %v; second %q, %v", firstID, firstErr, secondID, secondErr)
			}
			if n := f.asLink.registerSent.Load(); n != 1 {
				t.Fatalf("%d registration requests, want 1", n)
			}
		})
	}
}
