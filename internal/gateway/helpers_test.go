package gateway

import (
	"context"
	"io"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// The fixtures the gateway's end-to-end tests share: a development issuer, its tokens, and a
// gateway that authenticates with it. startTestGateway (e2e_test.go) starts the gateway itself.

// newIssuer starts a development OpenID issuer whose tokens are for testResource. It is closed
// when the test ends.
func newIssuer(t *testing.T) *devissuer.Issuer {
	t.Helper()
	return startIssuer(t, devissuer.Options{Audience: testResource})
}

// newExchangeIssuer is newIssuer that also answers RFC 8693 token exchange for the client
// "mcp-gateway" with the secret "gw-secret".
func newExchangeIssuer(t *testing.T) *devissuer.Issuer {
	t.Helper()
	return startIssuer(t, devissuer.Options{Audience: testResource, Clients: map[string]string{"mcp-gateway": "gw-secret"}})
}

// exchangeUpstream is backend name at url, reached by RFC 8693 token exchange at iss (a
// newExchangeIssuer) for the backend's URL as audience.
func exchangeUpstream(name, url string, iss *devissuer.Issuer) UpstreamConfig {
	u := UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: name, URL: url}}
	u.Auth.AuthConfig = upstreams.AuthConfig{Type: upstreams.AuthTokenExchange, TokenURL: iss.TokenURL(),
		ClientID: "mcp-gateway", Audience: url}
	u.Auth.ClientSecret = Secret{Value: "gw-secret"}
	return u
}

func startIssuer(t *testing.T, o devissuer.Options) *devissuer.Issuer {
	t.Helper()
	iss, err := devissuer.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iss.Close() })
	return iss
}

// mint returns a token of iss carrying claims.
func mint(t *testing.T, iss *devissuer.Issuer, claims devissuer.Claims) string {
	t.Helper()
	tok, err := iss.Mint(claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// mintFor returns a token of iss for sub with the scope tools:use.
func mintFor(t *testing.T, iss *devissuer.Issuer, sub string) string {
	t.Helper()
	return mint(t, iss, devissuer.Claims{"sub": sub, "scope": "tools:use"})
}

// trustIssuers turns authentication on for testResource, with tokens of the given issuers.
func trustIssuers(c *Config, issuers ...*devissuer.Issuer) {
	c.Auth.Disabled = false
	c.Server.PublicURL = testResource
	c.Auth.Issuers = nil
	for _, iss := range issuers {
		c.Auth.Issuers = append(c.Auth.Issuers, authz.IssuerConfig{Issuer: iss.URL()})
	}
}

// authGateway is a running gateway that authenticates callers with tokens of iss.
type authGateway struct {
	gw  Listeners
	iss *devissuer.Issuer
}

// url is the gateway's MCP endpoint.
func (g *authGateway) url() string { return "http://" + g.gw.MCP + "/mcp" }

// token returns a token of the gateway's issuer carrying claims.
func (g *authGateway) token(t *testing.T, claims devissuer.Claims) string {
	t.Helper()
	return mint(t, g.iss, claims)
}

// toolCalls counts the tools/call requests a backend received (health probes and discovery are
// other traffic).
func toolCalls(s *mcptest.Server) int { return len(s.RequestsOf("tools/call")) }

// serve runs the gateway with cfg and getenv until ctx is done, then drains, as `gateway serve`
// does without reloads; started, when not nil, receives the listeners' addresses. stdout is not
// written: the tests pass what they pass for stderr.
func serve(ctx context.Context, cfg *Config, getenv func(string) string, stdout, stderr io.Writer, started chan<- Listeners) error {
	return run(ctx, cfg, runOptions{getenv: getenv, stderr: stderr, started: started})
}
