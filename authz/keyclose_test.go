package authz

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
)

// gatedJWKS serves iss's key set once release is closed; asked receives each request, left the
// requests whose client hung up first.
type gatedJWKS struct {
	url                   string
	asked, left, released chan struct{}
}

func startGatedJWKS(t *testing.T, iss *devissuer.Issuer) *gatedJWKS {
	t.Helper()
	g := &gatedJWKS{asked: make(chan struct{}, 8), left: make(chan struct{}, 8), released: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.asked <- struct{}{}
		select {
		case <-r.Context().Done():
			g.left <- struct{}{}
			return
		case <-g.released:
		}
		resp, err := http.Get(iss.JWKSURL())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-g.released:
		default:
			close(g.released)
		}
	})
	g.url = srv.URL
	return g
}

// waitFor waits (bounded) for ch, failing with what.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal(what)
	}
}

// TestCloseEndsItsIssuersFetches: a key-set fetch is detached from its callers (one hanging up
// must not fail it for the others), so it used to run until auth.fetchTimeout even when nobody
// would use its keys: a configuration reload given up on SIGTERM left it open on a hanging issuer.
// Closing the Authenticator ends the fetches of its issuers, but not those of an issuer a newer
// Authenticator took over (a reload that applied): that one's fetch still completes.
func TestCloseEndsItsIssuersFetches(t *testing.T) {
	iss, err := devissuer.New(devissuer.Options{Audience: testResource})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = iss.Close() })
	t.Run("its own issuer", func(t *testing.T) {
		gate := startGatedJWKS(t, iss)
		a, err := NewAuthenticator(Config{Issuers: []IssuerConfig{{Issuer: iss.URL(), JWKSURL: gate.url}}, FetchTimeout: time.Hour},
			Options{ResourceURI: testResource})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		fetched := make(chan error, 1)
		go func() { fetched <- a.FetchKeys(ctx) }()
		waitFor(t, gate.asked, "the key set was not asked for")
		cancel() // the caller gives up: the flight stays, detached
		if err := <-fetched; err == nil {
			t.Fatal("FetchKeys succeeded with its context cancelled")
		}
		a.Close()
		waitFor(t, gate.left, "the fetch is still running after Close")
	})
	t.Run("an issuer taken over", func(t *testing.T) {
		gate := startGatedJWKS(t, iss)
		cfg := Config{Issuers: []IssuerConfig{{Issuer: iss.URL(), JWKSURL: gate.url}}, FetchTimeout: time.Hour}
		old, err := NewAuthenticator(cfg, Options{ResourceURI: testResource})
		if err != nil {
			t.Fatal(err)
		}
		next, err := NewAuthenticator(cfg, Options{ResourceURI: testResource, Previous: old})
		if err != nil {
			t.Fatal(err)
		}
		fetched := make(chan error, 1)
		go func() { fetched <- next.FetchKeys(context.Background()) }()
		waitFor(t, gate.asked, "the key set was not asked for")
		old.Close()
		close(gate.released)
		if err := <-fetched; err != nil {
			t.Fatalf("closing the replaced Authenticator ended the fetch of the one that took its issuer over: %v", err)
		}
		next.Close()
	})
}

// TestFailedTakeOverReleasesItsIssuers: a configuration whose NewAuthenticator fails partway
// (an issuer after the first has no audience) had already taken the first issuer over, counting
// itself among its users, and nothing closes an Authenticator that was never returned: the
// replaced Authenticator's Close then left the issuer a user too many, and its fetches ran on
// after their last real user was gone. A failed NewAuthenticator releases what it took.
func TestFailedTakeOverReleasesItsIssuers(t *testing.T) {
	iss, err := devissuer.New(devissuer.Options{Audience: testResource})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = iss.Close() })
	gate := startGatedJWKS(t, iss)
	taken := IssuerConfig{Issuer: iss.URL(), JWKSURL: gate.url, Audiences: []string{testResource}}
	old, err := NewAuthenticator(Config{Issuers: []IssuerConfig{taken}, FetchTimeout: time.Hour}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The second issuer lists no audience and no resource URI is given: ErrNoAudience.
	bad := Config{Issuers: []IssuerConfig{taken, {Issuer: "https://other.example.test"}}, FetchTimeout: time.Hour}
	if _, err := NewAuthenticator(bad, Options{Previous: old}); !errors.Is(err, ErrNoAudience) {
		t.Fatalf("NewAuthenticator of a configuration with an issuer without audience: %v, want ErrNoAudience", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	fetched := make(chan error, 1)
	go func() { fetched <- old.FetchKeys(ctx) }()
	waitFor(t, gate.asked, "the key set was not asked for")
	cancel()
	<-fetched
	old.Close()
	waitFor(t, gate.left, "the fetch is still running after its last Authenticator closed: the failed one still counts as a user")
}
