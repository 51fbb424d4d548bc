package useroauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A caller that found no metadata while another's discovery was under way, and reached the
// flight only after it failed, is given that failure: the authorization server is asked once
// per metadataRetry, not once more.
func TestDiscoveryFlightAfterAnotherFailed(t *testing.T) {
	var requests atomic.Int64
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer as.Close()
	x := &discoverer{b: &Backend{Name: "alpha", AuthServer: as.URL, Scopes: []string{"read"}}, client: as.Client(), now: time.Now}

	missed, release := make(chan struct{}), make(chan struct{})
	x.beforeFlight = func() {
		x.beforeFlight = nil
		close(missed)
		<-release
	}
	first := make(chan error, 1)
	go func() {
		_, err := x.get(context.Background())
		first <- err
	}()
	<-missed
	_, second := x.get(context.Background())
	once := requests.Load()
	close(release)
	if err := <-first; !errors.Is(err, ErrAuthServer) || !errors.Is(second, ErrAuthServer) {
		t.Fatalf("errors %v and %v, want ErrAuthServer", err, second)
	}
	if n := requests.Load(); once == 0 || n != once {
		t.Fatalf("%d requests to the authorization server, want the %d of one discovery", n, once)
	}
}
