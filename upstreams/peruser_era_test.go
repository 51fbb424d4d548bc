package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// accountVault is a token vault in which only alice has connected her account.
type accountVault struct{}

func (accountVault) UserToken(_ context.Context, _, caller string) (string, bool, error) {
	if caller == "https://issuer.example#alice" {
		return "alice-account", true, nil
	}
	return "", false, nil
}

func (accountVault) Rejected(context.Context, string, string, string) {}

// TestPerUserEraProbeCarriesAccountToken: a per-user backend of protocol auto that refuses
// every request without an account token, server/discover included (as the SDKs' auth
// middleware does), is usable: the era probe made for a caller carries that caller's account
// token (from the vault here) and learns the era. A caller without an account is told to
// connect one, and that refusal of its probe does not hold back the next caller, who probes at
// once rather than after a backoff.
func TestPerUserEraProbeCarriesAccountToken(t *testing.T) {
	be := mcptest.StartServer(t, "alpha", mcptest.WithMiddleware(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer alice-account" {
				w.Header().Set("WWW-Authenticate", "Bearer")
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}))
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: be.URL(),
		Auth: AuthConfig{Type: AuthUserOAuth}}}}, Options{UserTokens: accountVault{}})
	call := func(caller string) error {
		s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`7`),
			Target: Target{Upstream: "alpha", Name: mcptest.ToolEcho}, Caller: caller,
			Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"name":"alpha__echo","arguments":{"text":"x"}}`)})
		if err != nil {
			return err
		}
		return drain(s)
	}
	if err := call("https://issuer.example#bob"); !errors.Is(err, backend.ErrUserTokenNeeded) {
		t.Fatalf("a caller without an account: err = %v, want backend.ErrUserTokenNeeded", err)
	}
	if err := call("https://issuer.example#alice"); err != nil {
		t.Fatalf("a caller with an account, right after: %v", err)
	}
	if e := r.byName["alpha"].Era(); e != era.Modern {
		t.Fatalf("era %d, want modern learnt by the probe carrying the account token", e)
	}
}
