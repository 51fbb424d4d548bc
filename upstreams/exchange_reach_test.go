package upstreams

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestExchangeListOnlyWhereTheCallerReaches: a token-exchange backend acts as each caller with
// a token exchanged for the caller's own, as a per-user backend acts with the caller's account
// (TestPerUserListOnlyWhereTheCallerReaches). A list of a caller whose policy gives it nothing
// of that backend neither exchanges the caller's token nor sends the backend anything; a
// caller the policy reaches is listed there as before.
func TestExchangeListOnlyWhereTheCallerReaches(t *testing.T) {
	as := startAuthServer(t, nil)
	exchanged := mcptest.StartServer(t, "alpha")
	shared := mcptest.StartServer(t, "beta")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: exchanged.URL(), Protocol: ProtocolVersion, Auth: as.auth(AuthTokenExchange, exchanged.URL())},
		{Name: "beta", URL: shared.URL(), Protocol: ProtocolVersion}}}, Options{})
	alice, err := as.iss.Mint(devissuer.Claims{"sub": "alice"})
	if err != nil {
		t.Fatal(err)
	}
	list := func(reaches func(string) bool) string {
		t.Helper()
		res, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList, SubjectToken: alice,
			CacheKey: as.iss.URL() + "#alice", Reaches: reaches, Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		return string(res)
	}

	got := list(func(upstream string) bool { return upstream != "alpha" })
	if n := as.requests.Load(); n != 0 {
		t.Errorf("the caller's token was exchanged %d times for a backend its policy gives it nothing of", n)
	}
	if n := len(exchanged.RequestsOf(MethodToolsList)); n != 0 {
		t.Errorf("the token-exchange backend was sent %d lists for a caller its policy gives nothing of", n)
	}
	if !strings.Contains(got, `"beta__echo"`) || strings.Contains(got, `"alpha__`) {
		t.Errorf("the list lacks the shared backend's tools or holds the exchanging backend's (%d bytes)", len(got))
	}

	got = list(func(string) bool { return true })
	if as.requests.Load() == 0 || len(exchanged.RequestsOf(MethodToolsList)) == 0 || !strings.Contains(got, `"alpha__echo"`) {
		t.Errorf("a caller the policy reaches: %d exchanges, %d lists, alpha's tools listed: %v", as.requests.Load(),
			len(exchanged.RequestsOf(MethodToolsList)), strings.Contains(got, `"alpha__echo"`))
	}
}
