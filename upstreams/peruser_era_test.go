package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestPerUserEraProbeCarriesAccountToken: a per-user backend of protocol auto that refuses
// every request without an account token, server/discover included (as the SDKs' auth
// middleware does), is usable: the era probe made for a caller carries that caller's account
// token (from the vault here) and learns the era. A caller without an account is told to
// connect one, and that refusal of its probe does not hold back the next caller, who probes at
// once rather than after a backoff.
func TestPerUserEraProbeCarriesAccountToken(t *testing.T) {
	// Only alice has connected her account.
	be := mcptest.StartServer(t, "alpha", mcptest.WithAccountToken("alice-account"))
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: be.URL(),
		Auth: AuthConfig{Type: AuthUserOAuth}}}}, Options{UserTokens: mcptest.AccountVault{Caller: "https://issuer.example#alice", Token: "alice-account"}})
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
