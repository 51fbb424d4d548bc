package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
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

// countingVault is an AccountVault that counts the lookups of each backend's token.
type countingVault struct {
	mcptest.AccountVault
	mu      sync.Mutex
	lookups map[string]int
}

func (v *countingVault) UserToken(ctx context.Context, backend, caller string) (string, bool, error) {
	v.mu.Lock()
	v.lookups[backend]++
	v.mu.Unlock()
	return v.AccountVault.UserToken(ctx, backend, caller)
}

func (v *countingVault) count(backend string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.lookups[backend]
}

// TestPerUserListOnlyWhereTheCallerReaches: a per-user backend acts at its server as the caller,
// with the caller's own account token. A list made for a caller whose policy (or endpoint) gives
// it nothing of that backend (Reaches false: the caller lost the claim or scope the backend's
// rules need, after connecting) does not ask that backend: the caller's token is not looked up
// (so neither refreshed nor kept in use, its record left to expire unused), nor sent there, for
// items the caller would not be shown. The other backends are listed as before, and a caller
// the policy reaches lists the per-user backend with its token.
func TestPerUserListOnlyWhereTheCallerReaches(t *testing.T) {
	const alice = "https://issuer.example#alice"
	perUser := mcptest.StartServer(t, "alpha", mcptest.WithAccountToken("alice-account"))
	shared := mcptest.StartServer(t, "beta")
	vault := &countingVault{AccountVault: mcptest.AccountVault{Caller: alice, Token: "alice-account"}, lookups: map[string]int{}}
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: perUser.URL(), Protocol: ProtocolVersion, Auth: AuthConfig{Type: AuthUserOAuth}},
		{Name: "beta", URL: shared.URL(), Protocol: ProtocolVersion}}}, Options{UserTokens: vault})
	list := func(reaches func(string) bool) string {
		t.Helper()
		res, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList, CacheKey: alice, Reaches: reaches,
			Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		return string(res)
	}

	got := list(func(upstream string) bool { return upstream != "alpha" })
	if n := vault.count("alpha"); n != 0 {
		t.Errorf("the caller's account token was looked up %d times for a backend its policy gives it nothing of", n)
	}
	if n := len(perUser.RequestsOf(MethodToolsList)); n != 0 {
		t.Errorf("the per-user backend was sent %d lists for a caller its policy gives nothing of", n)
	}
	if !strings.Contains(got, `"beta__echo"`) || strings.Contains(got, `"alpha__`) {
		t.Errorf("the list lacks the shared backend's tools or holds the per-user backend's (%d bytes)", len(got))
	}

	got = list(func(string) bool { return true })
	if vault.count("alpha") == 0 || len(perUser.RequestsOf(MethodToolsList)) == 0 || !strings.Contains(got, `"alpha__echo"`) {
		t.Errorf("a caller the policy reaches: %d lookups, %d lists, alpha's tools listed: %v", vault.count("alpha"),
			len(perUser.RequestsOf(MethodToolsList)), strings.Contains(got, `"alpha__echo"`))
	}
}
