package useroauth

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/egress"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
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
	var elsewhere atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"x","token_type":"Bearer","client_id":"c"}`)
	}))
	t.Cleanup(target.Close)
	var status atomic.Int64
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path+"?moved=q7Zr", int(status.Load()))
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
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound, http.StatusSeeOther} {
		status.Store(int64(code))
		for name, send := range requests {
			err := send()
			if !errors.Is(err, ErrAuthServer) || !errors.Is(err, egress.ErrRedirected) || !strings.Contains(err.Error(), fmt.Sprint(code)) {
				t.Errorf("%s answered %d: %v; want ErrAuthServer saying the redirect is not followed", name, code, err)
			}
			if err != nil && (strings.Contains(err.Error(), "q7Zr") || strings.Contains(err.Error(), target.URL)) {
				t.Errorf("%s answered %d: the error names the redirect's target: %v", name, code, err)
			}
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirects' target received %d requests, want none", n)
	}
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
		ClientID: "gw", ClientSecret: "client-secret-9kX2", Timeout: time.Second}},
		Deps{Records: mem, Store: mem, Replay: mem, Keys: ring, SignIn: signIn, BaseURL: "https://gw.example",
			Logger: slog.New(slog.DiscardHandler), HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
