package webpage

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

// A sign-in that found no provider while another's discovery was under way, and reached the
// flight only after it failed, is given that failure: a down issuer is asked once per
// issuerRetryInterval, not once more.
func TestDiscoveryFlightAfterAnotherFailed(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	is := &issuer{url: srv.URL, client: srv.Client(), now: time.Now}

	var second error
	first := flighttest.HeldFirst(&is.beforeFlight,
		func() error { _, err := is.get(context.Background()); return err },
		func() { _, second = is.get(context.Background()) })
	var ue *UnreachableError
	if err := first; !errors.As(err, &ue) || !errors.As(second, &ue) {
		t.Fatalf("errors %v and %v, want *UnreachableError", err, second)
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d discovery requests, want 1", n)
	}
}
