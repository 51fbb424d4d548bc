package devissuer

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

const commandAudience = "https://mcp.example.test/mcp"

// runCommand runs Command with args until the test ends and returns what it printed once the
// printed token is there.
func runCommand(t *testing.T, args ...string) (issuer, token string, out *mcptest.LogBuffer) {
	t.Helper()
	out = &mcptest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Command(ctx, args, out, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Command: %v", err)
		}
	})
	tokenLine := regexp.MustCompile(`export TOKEN='([^']+)'`)
	mcptest.WaitFor(t, "the token printed", func() bool { return tokenLine.MatchString(out.String()) })
	issuer = regexp.MustCompile(`(?m)^issuer +(\S+)`).FindStringSubmatch(out.String())[1]
	return issuer, tokenLine.FindStringSubmatch(out.String())[1], out
}

// verifier authenticates tokens for commandAudience against issuer, as the gateway does
// (discovery and key set over HTTP, go-oidc).
func verifier(t *testing.T, issuer string) *authz.Authenticator {
	t.Helper()
	a, err := authz.NewAuthenticator(authz.Config{Issuers: []authz.IssuerConfig{{Issuer: issuer}}}, authz.Options{ResourceURI: commandAudience})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCommandPrintsATokenTheGatewayAccepts: the issuer command says loudly that it is for
// development, prints the configuration that trusts it and a token for the subject, scopes and
// groups asked for, which the gateway's own authenticator accepts.
func TestCommandPrintsATokenTheGatewayAccepts(t *testing.T) {
	issuer, token, out := runCommand(t, "--listen", "127.0.0.1:0", "--audience", commandAudience,
		"--sub", "alice", "--scope", "notes:read  notes:write", "--groups", "sre, ops")
	text := out.String()
	for _, want := range []string{"DEVELOPMENT ONLY", "signs ANY token", "auth:\n    issuers:\n      - issuer: " + issuer,
		"publicURL: " + commandAudience, "curl -s " + issuer + "/mint"} {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q:\n%s", want, text)
		}
	}
	p, err := verifier(t, issuer).Authenticate(context.Background(), token)
	if err != nil {
		t.Fatalf("the printed token: %v", err)
	}
	if p.Subject != "alice" || !slices.Equal(p.Scopes.Sorted(), []string{"notes:read", "notes:write"}) || !slices.Equal(p.Groups, []string{"sre", "ops"}) {
		t.Fatalf("principal = %+v", p)
	}
}

// TestCommandMintsOnRequest: POST /mint signs a token for the subject and scopes of its form,
// which the authenticator accepts; a request from a web page (Origin) and an unbounded lifetime
// are refused.
func TestCommandMintsOnRequest(t *testing.T) {
	issuer, _, _ := runCommand(t, "--listen", "127.0.0.1:0", "--audience", commandAudience)
	mint := func(form url.Values, origin string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, issuer+"/mint", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body struct {
			AccessToken string `json:"access_token"`
		}
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body.AccessToken
	}
	status, tok := mint(url.Values{"sub": {"bob"}, "scope": {"tools:use"}, "ttl": {"1h"}}, "")
	if status != http.StatusOK {
		t.Fatalf("mint: %d", status)
	}
	p, err := verifier(t, issuer).Authenticate(context.Background(), tok)
	if err != nil || p.Subject != "bob" || !slices.Equal(p.Scopes.Sorted(), []string{"tools:use"}) {
		t.Fatalf("the minted token: %v %+v", err, p)
	}
	if status, _ := mint(url.Values{"sub": {"bob"}}, "https://evil.example"); status != http.StatusForbidden {
		t.Errorf("a browser's mint: %d, want 403", status)
	}
	if status, _ := mint(url.Values{"ttl": {"1000h"}}, ""); status != http.StatusBadRequest {
		t.Errorf("a 1000h token: %d, want 400", status)
	}
	// A field it does not know (a misspelt scope, a claim it cannot set) is refused, not
	// dropped: a token without the scopes asked for would only show as a 403 at the gateway.
	for _, form := range []url.Values{{"sub": {"bob"}, "scopes": {"tools:use"}}, {"Scope": {"tools:use"}}, {"aud": {"x"}},
		{"scope": {"a", "b"}}} {
		if status, tok := mint(form, ""); status != http.StatusBadRequest || tok != "" {
			t.Errorf("mint %v: %d, want 400 and no token", form, status)
		}
	}
}

// TestCommandSignsInForTheApprovalPage: with --client, the command also serves the
// authorization code flow the gateway's approval page (and per-user OAuth's connect pages)
// sign users in with: its discovery names the endpoints (check-config --online asks for them),
// it prints the approval block, and the subject of its token signs in, through go-oidc and
// x/oauth2 as the gateway does, and no one else does. Without --client it serves none.
func TestCommandSignsInForTheApprovalPage(t *testing.T) {
	issuer, _, out := runCommand(t, "--listen", "127.0.0.1:0", "--audience", commandAudience,
		"--sub", "alice", "--scope", "notes:read", "--client", webClientID+"="+redirectURI)
	if want := "  approval:\n    clientID: " + webClientID + "\n"; !strings.Contains(out.String(), want) {
		t.Errorf("the output lacks %q:\n%s", want, out)
	}
	p, err := oidc.NewProvider(context.Background(), issuer)
	if err != nil || p.Endpoint().AuthURL == "" || p.Endpoint().TokenURL == "" {
		t.Fatalf("discovery: %v %+v", err, p)
	}
	f := &signInFixture{provider: p, browser: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	cfg := f.config(webClientID, "")
	verifier := oauth2.GenerateVerifier()
	tok, err := cfg.Exchange(context.Background(), f.code(t, cfg, "alice", verifier, "n-1"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if idt, err := p.Verifier(&oidc.Config{ClientID: webClientID}).Verify(context.Background(), raw); err != nil || idt.Subject != "alice" {
		t.Fatalf("ID token: %v", err)
	}
	if res := f.signIn(t, cfg.AuthCodeURL("st-2", oauth2.S256ChallengeOption(verifier)), "bob"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("bob signed in: %d", res.StatusCode)
	}

	plain, _, _ := runCommand(t, "--listen", "127.0.0.1:0", "--audience", commandAudience)
	if p, err := oidc.NewProvider(context.Background(), plain); err != nil || p.Endpoint().AuthURL != "" {
		t.Errorf("without --client: %v, authorization endpoint %q", err, p.Endpoint().AuthURL)
	}
}

// TestCommandRefuses: without the audience, off loopback, or with a senseless lifetime, the
// command does not start.
func TestCommandRefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no audience", []string{"--listen", "127.0.0.1:0"}, "--audience is required"},
		{"not loopback", []string{"--listen", "0.0.0.0:0", "--audience", commandAudience}, ErrNotLoopback.Error()},
		{"no lifetime", []string{"--listen", "127.0.0.1:0", "--audience", commandAudience, "--ttl", "0s"}, "--ttl"},
		{"stray argument", []string{"--audience", commandAudience, "alice"}, "unexpected arguments"},
		{"client without redirect URI", []string{"--audience", commandAudience, "--client", "pages"}, "want ID=REDIRECT_URI"},
		{"client with a relative redirect URI", []string{"--audience", commandAudience, "--client", "pages=/approval/callback"}, "want ID=REDIRECT_URI"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Command(context.Background(), tt.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if err := Command(context.Background(), []string{"-h"}, io.Discard, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}
