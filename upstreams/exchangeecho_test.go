package upstreams

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestTokenExchangeNeverHandsOnTheCallersToken: an authorization server that "exchanges" a
// caller's token by answering with that same token (a pass-through token service, or one
// misconfigured into being one) would have the gateway send the caller's own token to the
// backend. The gateway refuses that answer, as it refuses any token answer it cannot use: the
// call is not sent, and the next call asks again rather than use a cached copy.
func TestTokenExchangeNeverHandsOnTheCallersToken(t *testing.T) {
	as := startAuthServer(t, nil)
	var exchanges atomic.Int64
	tokenURL := upstreamstest.Loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" {
			http.Error(w, `{"error":"unsupported_grant_type"}`, http.StatusBadRequest)
			return
		}
		exchanges.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": r.PostForm.Get("subject_token"), "token_type": "Bearer",
			"issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "expires_in": 600})
	})) + "/token"
	backend := mcptest.StartServer(t, "alpha")
	auth := as.auth(AuthTokenExchange, backend.URL())
	auth.TokenURL = tokenURL
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: ProtocolVersion,
		Auth: auth}}}, Options{})
	alice, err := as.iss.Mint(devissuer.Claims{"sub": "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := whoami(r, alice); !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrCredentials) {
			t.Fatalf("call %d: err = %v, want ErrUnavailable and ErrCredentials", i, err)
		}
	}
	if n := exchanges.Load(); n != 2 {
		t.Errorf("%d exchanges for two calls, want 2: the refused answer is not cached", n)
	}
	if len(backend.RequestsOf(MethodToolsCall)) != 0 {
		t.Error("a call reached the backend")
	}
	assertNeverSent(t, backend, alice)
}
