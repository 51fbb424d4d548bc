package useroauth

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/redirecttest"
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// TestCredentialedRequestsFollowNoRedirect: every request the gateway sends an authorization
// server carries a credential (the token request's code or refresh token and client secret, a
// revocation's token, a registration), so none follows a redirect, whatever the client the
// service was given would do: an endpoint answering 307 or 308 (which would have the body sent
// again) or any other redirect sends nothing to the redirect's target, and the error says a
// redirect was not followed, naming neither the target nor its query.
func TestCredentialedRequestsFollowNoRedirect(t *testing.T) {
	t.Parallel()
	target := redirecttest.NewTarget(t)
	var status atomic.Int64
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.Location(r.URL.Path), int(status.Load()))
	}))
	t.Cleanup(as.Close)
	// A client that follows redirects, as a caller's own might.
	svc := bareService(t, &http.Client{Timeout: 10 * time.Second})
	meta := &asMetadata{Issuer: as.URL, TokenEndpoint: as.URL + "/token", RevocationEndpoint: as.URL + "/revoke",
		RegistrationEndpoint: as.URL + "/register"}
	secret := client{ID: "gw", Secret: "client-secret-9kX2"}
	requests := map[string]func() error{
		"token": func() error {
			_, err := svc.oauth.tokenRequest(t.Context(), meta, secret, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt"}})
			return err
		},
		"revocation": func() error { return svc.oauth.revoke(t.Context(), meta, secret, "rt", "refresh_token") },
		"registration": func() error {
			_, _, err := svc.oauth.postJSON(t.Context(), meta.RegistrationEndpoint, []byte(`{"client_name":"gw"}`))
			return err
		},
	}
	for _, code := range redirecttest.Codes() {
		status.Store(int64(code))
		for name, send := range requests {
			err := send()
			if !errors.Is(err, ErrAuthServer) {
				t.Errorf("%s answered %d: %v; want ErrAuthServer", name, code, err)
			}
			if msg := target.Refused(err, code); msg != "" {
				t.Errorf("%s answered %d: %s", name, code, msg)
			}
		}
	}
	target.Unreached(t)
}

// bareService is a Service for one backend on the memory store, reaching authorization servers
// with client; nothing of it is started.
func bareService(t *testing.T, client *http.Client) *Service {
	t.Helper()
	ring, err := seal.New(seal.Config{Keys: testKeys})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	signIn := webpage.NewSignIn(webpage.SignInConfig{Issuer: "https://idp.example", ClientID: "pages",
		RedirectURL: "https://gw.example/signin/callback", SessionTTL: time.Minute}, ring, nil, nil)
	svc, err := New(Config{Keys: testKeys}.WithDefaults(), []Backend{{Name: backendName, URL: "https://saas.example/mcp",
		AuthServer: "https://as.example", ClientID: "gw", ClientSecret: "client-secret-9kX2", Timeout: time.Second}},
		Deps{Records: mem, Store: mem, Replay: mem, Keys: ring, SignIn: signIn, BaseURL: "https://gw.example",
			Logger: slog.New(slog.DiscardHandler), HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
