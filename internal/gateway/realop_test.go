package gateway

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestRealOpenIDProvider: a token issued by an OpenID provider this project did not write
// (zitadel's example OP, client-credentials grant, JWT access token) is verified by the gateway
// through discovery and JWKS, and the policy reads its claims: the official go-sdk client lists
// and calls exactly what a claims rule on "sub" allows. The example puts no "scope" claim in its
// tokens, so a scope-guarded tool is a step-up 403 for the same caller.
func TestRealOpenIDProvider(t *testing.T) {
	op := realop.Start(t, realop.Options{Audience: testResource})
	foreign := realop.Start(t, realop.Options{}) // aud is its client id, not this gateway
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = false
		c.Server.PublicURL = testResource
		c.Auth.Issuers = []authz.IssuerConfig{{Issuer: op.Issuer()}, {Issuer: foreign.Issuer()}}
		c.Auth.ResourceMetadata.ScopesSupported = []string{"tools:write"}
		c.Auth.Policy.Rules = []authz.RuleConfig{
			// Two issuers: each allow rule says whose tokens it trusts.
			{ID: "service", Upstream: "alpha", Tools: []string{"echo", "add"}, Claims: map[string][]string{"sub": {realop.ServiceClientID}}, Issuers: []string{op.Issuer()}},
			{ID: "write", Upstream: "alpha", Tools: []string{"progress"}, AllScopes: []string{"tools:write"}, Issuers: []string{"*"}},
		}
	}, alpha)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	token, err := op.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + gw.MCP + "/mcp"

	t.Run("list and call through the go-sdk client", func(t *testing.T) {
		cs := mcptest.Connect(t, url, mcptest.WithBearer(token))
		got := toolNames(t, cs)
		slices.Sort(got)
		if want := []string{"alpha__add", "alpha__echo"}; !slices.Equal(got, want) {
			t.Fatalf("tools/list = %v, want %v", got, want)
		}
		alpha.Reset()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "from zitadel"}})
		if err != nil || res.IsError || mcptest.ResultText(res) != "from zitadel" {
			t.Fatalf("CallTool: %v %+v", err, res)
		}
		fwd := alpha.Forwarded()
		if len(fwd) != 1 || strings.Contains(fwd[0].Header.Get("Authorization"), token) {
			t.Fatalf("backend got %d requests, or the client's token", len(fwd))
		}
	})
	t.Run("refused", func(t *testing.T) {
		other, err := foreign.Token(ctx)
		if err != nil {
			t.Fatal(err)
		}
		refusals(t, url, alpha, []refusal{
			{"tampered signature", devissuer.TamperSignature(token), "alpha__echo", 401, `error="invalid_token"`},
			{"audience of another resource", other, "alpha__echo", 401, `error_description="The access token was not issued for this resource"`},
			{"no scope claim: step-up", token, "alpha__progress", 403, `error="insufficient_scope", scope="tools:write"`},
		})
	})
	t.Run("go-sdk client with a tampered token is refused with 401", func(t *testing.T) {
		rec := &statusRecorder{}
		cs, err := mcptest.Dial(ctx, url, mcptest.WithBearer(devissuer.TamperSignature(token)), mcptest.WithRoundTripper(rec))
		if err == nil {
			cs.Close()
			t.Fatal("Dial succeeded with a tampered token")
		}
		// The go-sdk falls back to initialize after a failed server/discover; the gateway's
		// first answer is the one that matters.
		if got := rec.first(); got != http.StatusUnauthorized {
			t.Fatalf("first response status = %d, want 401 (Dial: %v)", got, err)
		}
	})
}

// statusRecorder is an http.RoundTripper that remembers response statuses.
type statusRecorder struct {
	mu       sync.Mutex
	statuses []int
}

func (r *statusRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.statuses = append(r.statuses, res.StatusCode)
		r.mu.Unlock()
	}
	return res, err
}

func (r *statusRecorder) first() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.statuses) == 0 {
		return 0
	}
	return r.statuses[0]
}

type refusal struct {
	name, token, tool string
	status            int
	challenge         string // a substring of WWW-Authenticate
}

// refusals posts a tools/call for each row and checks the status and challenge, and that the
// backend received nothing.
func refusals(t *testing.T, url string, backend *mcptest.Server, rows []refusal) {
	t.Helper()
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			backend.Reset()
			h := modernHeaders("tools/call", tt.tool)
			h.Set("Authorization", "Bearer "+tt.token)
			status, hdr, body := post(t, url, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+testMeta+`,"name":"`+tt.tool+`","arguments":{"text":"x","steps":1}}}`)
			if status != tt.status {
				t.Fatalf("status = %d, want %d: %s", status, tt.status, body)
			}
			if ch := hdr.Get("WWW-Authenticate"); !strings.Contains(ch, tt.challenge) {
				t.Errorf("WWW-Authenticate = %q, want it to contain %q", ch, tt.challenge)
			}
			if n := len(backend.Forwarded()); n != 0 {
				t.Errorf("backend received %d requests", n)
			}
		})
	}
}
