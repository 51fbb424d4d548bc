// Package oauthbackend runs the kind of backend per-user OAuth is for: an MCP server (the
// official Go SDK, stateless 2026-07-28 mode) that is a resource server of another
// organisation's authorization server. It serves its protected resource metadata (RFC 9728),
// answers 401 with a WWW-Authenticate challenge to a request without a valid bearer token, and
// verifies tokens itself with go-oidc against that authorization server's issuer (discovery and
// keys over HTTP, signature, expiry, audience). Its tools answer as the user the token names, so
// a test can prove whose token arrived.
//
// For tests only.
package oauthbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// PRMPath is where the backend serves its protected resource metadata: the path-specific
// well-known URI of its endpoint (RFC 9728 §3.1).
const PRMPath = "/.well-known/oauth-protected-resource" + mcptest.EndpointPath

// Options configure Start.
type Options struct {
	// Issuer is the authorization server whose tokens the backend accepts. Required.
	Issuer string
	// ClientIDs are the audiences accepted (the clients tokens were issued to); empty accepts
	// any audience of the issuer (for dynamically registered clients, whose ids are not
	// known in advance).
	ClientIDs []string
	// Scopes are its metadata's scopes_supported.
	Scopes []string
	// AuthServers overrides the metadata's authorization_servers (default: Issuer).
	AuthServers []string
	// Refuse, when set, makes the backend answer 401 to tokens of the subjects it returns true
	// for, as a backend does for a token its authorization server revoked.
	Refuse func(sub string) bool
}

// Backend is a running backend.
type Backend struct {
	*mcptest.Server
	issuer string

	mu     sync.Mutex
	tokens []string // every bearer token presented, valid or not
	calls  []string // the subject of every tool call
}

// Start starts the backend named name; it stops when tb ends.
func Start(tb testing.TB, name string, opts Options) *Backend {
	tb.Helper()
	b := &Backend{issuer: opts.Issuer}
	provider, err := oidc.NewProvider(oidc.ClientContext(context.Background(), &http.Client{Timeout: 10 * time.Second}), opts.Issuer)
	if err != nil {
		tb.Fatalf("oauthbackend: discovering %s: %v", opts.Issuer, err)
	}
	verifier := provider.Verifier(&oidc.Config{SkipClientIDCheck: true})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		b.mu.Lock()
		b.tokens = append(b.tokens, token)
		b.mu.Unlock()
		t, err := verifier.Verify(ctx, token)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		if len(opts.ClientIDs) > 0 && !slices.ContainsFunc(t.Audience, func(a string) bool { return slices.Contains(opts.ClientIDs, a) }) {
			return nil, fmt.Errorf("%w: audience %v", auth.ErrInvalidToken, t.Audience)
		}
		if opts.Refuse != nil && opts.Refuse(t.Subject) {
			return nil, fmt.Errorf("%w: revoked", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: t.Subject, Expiration: t.Expiry}, nil
	}
	challenge := &auth.RequireBearerTokenOptions{} // its metadata URL is known once the server listens
	mw := func(next http.Handler) http.Handler { return auth.RequireBearerToken(verify, challenge)(next) }
	servers := opts.AuthServers
	if servers == nil {
		servers = []string{opts.Issuer}
	}
	var resource string
	prm := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": resource, "authorization_servers": servers,
			"scopes_supported": opts.Scopes, "bearer_methods_supported": []string{"header"}})
	})
	whoami := &mcp.Tool{Name: "whoami", Description: "Returns the subject of the bearer token the backend received.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}
	b.Server = mcptest.StartServer(tb, name, mcptest.WithoutDefaults(), mcptest.WithMiddleware(mw), mcptest.WithRoute(PRMPath, prm),
		mcptest.WithTool(whoami, b.whoami),
		mcptest.WithResource(&mcp.Resource{URI: "me://profile", Name: "profile", MIMEType: "text/plain"}, b.profile))
	resource = b.URL()
	challenge.ResourceMetadataURL = strings.TrimSuffix(b.URL(), mcptest.EndpointPath) + PRMPath
	return b
}

func subjectOf(extra *mcp.RequestExtra) (string, error) {
	if extra == nil || extra.TokenInfo == nil || extra.TokenInfo.UserID == "" {
		return "", errors.New("no verified token")
	}
	return extra.TokenInfo.UserID, nil
}

func (b *Backend) whoami(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	sub, err := subjectOf(req.Extra)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.calls = append(b.calls, sub)
	b.mu.Unlock()
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sub=" + sub}}}, nil
}

func (b *Backend) profile(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	sub, err := subjectOf(req.Extra)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "sub=" + sub}}}, nil
}

// Tokens returns every bearer token the backend was presented, in order.
func (b *Backend) Tokens() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.tokens)
}

// Calls returns the subject of every tool call the backend ran, in order.
func (b *Backend) Calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

// Reset forgets the tokens and calls seen, and the exchanges recorded.
func (b *Backend) Reset() {
	b.Server.Reset()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens, b.calls = nil, nil
}
