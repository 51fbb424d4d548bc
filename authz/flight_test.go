package authz

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/flighttest"
)

// A caller that found no verifier while another's discovery was under way, and reached the
// flight only after it failed, is given that failure's back-off: the issuer is asked once per
// retry interval, not once more.
func TestDiscoveryFlightAfterAnotherFailed(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	a := newAuth(t, Config{Issuers: []IssuerConfig{{Issuer: srv.URL}}}, newClock())
	is := a.issuers[srv.URL]
	var secondErr error
	firstErr := flighttest.HeldFirst(&is.beforeFlight,
		func() error { _, err := is.ready(context.Background()); return err },
		func() { _, secondErr = is.ready(context.Background()) })
	for _, err := range []error{firstErr, secondErr} {
		if !errors.Is(err, ErrIssuerUnavailable) {
			t.Fatalf("err = %v, want ErrIssuerUnavailable", err)
		}
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d discovery requests, want 1", n)
	}
}

// A caller that decided to refetch the key set while another's fetch was under way, and
// reached the flight only after it ended, is given that fetch's keys: one fetch per refetch
// interval, whatever the number of callers.
func TestJWKSFlightAfterAnotherEnded(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var requests atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				requests.Add(1)
				w.WriteHeader(status)
				_, _ = w.Write([]byte(`{"keys":[]}`))
			}))
			defer srv.Close()
			k := &keySet{url: srv.URL, client: srv.Client(), now: newClock().Now, minRefresh: time.Minute,
				maxAge: time.Hour, fetchTimeout: 10 * time.Second}
			var secondErr error
			firstErr := flighttest.HeldFirst(&k.beforeFlight,
				func() error { _, err := k.refresh(context.Background()); return err },
				func() { _, secondErr = k.refresh(context.Background()) })
			if (firstErr == nil) != (status == http.StatusOK) || (secondErr == nil) != (status == http.StatusOK) {
				t.Fatalf("errors %v and %v for HTTP %d", firstErr, secondErr, status)
			}
			if n := requests.Load(); n != 1 {
				t.Fatalf("%d key set fetches, want 1", n)
			}
		})
	}
}
