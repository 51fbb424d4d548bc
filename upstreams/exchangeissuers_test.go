package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestTokenExchangeOnlyForListedIssuers: a token-exchange backend's token endpoint receives
// only the tokens of callers of auth.subjectIssuers. A caller of another issuer (or a request
// naming no caller) is refused before its token is sent anywhere, on calls (-32013, the
// backend's health not charged) and lists (the backend is left out), for a 2026-07-28 backend
// and a pre-2026 one alike; a listed issuer's caller goes through.
func TestTokenExchangeOnlyForListedIssuers(t *testing.T) {
	for _, protocol := range []string{ProtocolVersion, era.V20251125} {
		t.Run(protocol, func(t *testing.T) {
			as := startAuthServer(t, nil)
			backend := startAlphaOfEra(t, protocol)
			auth := as.auth(AuthTokenExchange, backend.URL())
			auth.SubjectIssuers = []string{as.iss.URL()}
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: protocol,
				Auth: auth}}}, Options{})
			ctx := context.Background()
			alice, _ := as.iss.Mint(devissuer.Claims{"sub": "alice"})
			before, seen := as.requests.Load(), len(backend.Requests())
			for _, caller := range []string{"https://other.example#alice", "", as.iss.URL() + "x#alice", "#alice"} {
				err := callAs(ctx, r, mcptest.ToolWhoAmI, `{}`, alice, caller)
				var rpc *jsonrpc.Error
				if !errors.Is(err, ErrIssuerNotExchanged) || !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeUnauthorized {
					t.Errorf("call as %q: %v, want the issuer refused with -32013", caller, err)
				}
				if errors.Is(err, ErrUnavailable) {
					t.Errorf("call as %q: a refusal of the caller reported as the backend unavailable: %v", caller, err)
				}
				res, err := r.List(ctx, &ListRequest{Method: MethodToolsList, SubjectToken: alice, CacheKey: caller,
					Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
				if err != nil || strings.Contains(string(res), "alpha__") {
					t.Errorf("list as %q: %v, %s; want alpha left out", caller, err, res)
				}
			}
			if n := as.requests.Load() - before; n != 0 {
				t.Errorf("%d token requests for callers of issuers not listed", n)
			}
			for _, ex := range backend.Requests()[seen:] {
				if m := legacyMethod(ex); m == MethodToolsCall || m == MethodToolsList {
					t.Errorf("the backend received %s for a caller of an issuer not listed", m)
				}
			}
			if h := r.Health(); len(h) != 1 || h[0].LastError != "" {
				t.Errorf("the refusals were charged to the backend's health: %+v", h)
			}
			if err := callAs(ctx, r, mcptest.ToolWhoAmI, `{}`, alice, as.iss.URL()+"#alice"); err != nil {
				t.Fatalf("a caller of the listed issuer: %v", err)
			}
			if got := bearerSub(t, lastLegacyRequest(t, backend, MethodToolsCall)); got != "alice" {
				t.Errorf("the listed issuer's caller reached the backend as %q", got)
			}
		})
	}
}

// TestSubjectKeyComputedOncePerRequest: a call that carries its token's SubjectKey (the HTTP
// layer computes it once per request) is keyed by it, and the token is not hashed again: the
// exchanged-token cache answers a call whose key matches, whatever the token, for a 2026-07-28
// backend and a pre-2026 one (whose session's requests exchange the token too) alike. (Hashing
// a 1 KiB token costs about 0.7 µs and 1 KiB of garbage; a call to a token-exchange backend
// hashed it up to three times: its cached tool headers, its pin verdicts, its exchanged token.)
func TestSubjectKeyComputedOncePerRequest(t *testing.T) {
	for _, protocol := range []string{ProtocolVersion, era.V20251125} {
		t.Run(protocol, func(t *testing.T) {
			as := startAuthServer(t, nil)
			backend := startAlphaOfEra(t, protocol)
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: protocol,
				Auth: as.auth(AuthTokenExchange, backend.URL())}}}, Options{})
			alice, _ := as.iss.Mint(devissuer.Claims{"sub": "alice"})
			key := SubjectKey(alice)
			call := func(tok, key string) {
				t.Helper()
				s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`1`),
					Target:       Target{Upstream: "alpha", Name: mcptest.ToolWhoAmI},
					Params:       json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"name":"alpha__whoami","arguments":{}}`),
					SubjectToken: tok, SubjectKey: key, Caller: as.iss.URL() + "#alice"})
				if err != nil {
					t.Fatal(err)
				}
				if err := drain(s); err != nil {
					t.Fatal(err)
				}
			}
			call(alice, key)
			before := as.requests.Load()
			call(alice+" ", key) // another string with the same key: the key is what is looked up
			if n := as.requests.Load() - before; n != 0 {
				t.Errorf("%d token requests: the key given was not used (the token was hashed again)", n)
			}
			call(alice, "") // without a key the token is hashed here, to the same key
			if n := as.requests.Load() - before; n != 0 {
				t.Errorf("%d token requests for the same token without its key", n)
			}
		})
	}
}

// startAlphaOfEra starts the backend "alpha" speaking protocol: 2026-07-28 or a pre-2026
// revision.
func startAlphaOfEra(t *testing.T, protocol string) *mcptest.Server {
	t.Helper()
	if protocol != ProtocolVersion {
		return mcptest.StartLegacyServer(t, "alpha")
	}
	return mcptest.StartServer(t, "alpha")
}
