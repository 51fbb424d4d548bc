package upstreams

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// authServer is a real devissuer behind a counting proxy, so tests see how many token
// requests the gateway made.
type authServer struct {
	iss      *devissuer.Issuer
	tokenURL string
	requests atomic.Int64
}

func startAuthServer(t *testing.T, now func() time.Time) *authServer {
	t.Helper()
	iss, err := devissuer.New(devissuer.Options{Clients: map[string]string{"gateway": "gw-secret"},
		Audience: "https://gateway.example/mcp", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iss.Close() })
	a := &authServer{iss: iss}
	target, _ := url.Parse(iss.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	a.tokenURL = upstreamstest.Loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.requests.Add(1)
		proxy.ServeHTTP(w, r)
	})) + "/token"
	return a
}

// auth is the backend's auth block for a's token endpoint; a token-exchange one takes the
// tokens of a's own callers and of testCallers.
func (a *authServer) auth(typ, resource string) AuthConfig {
	c := AuthConfig{Type: typ, TokenURL: a.tokenURL, ClientID: "gateway", ClientSecret: "gw-secret",
		Scopes: []string{"mcp:tools"}, Resource: resource}
	if typ == AuthTokenExchange {
		c.SubjectIssuers = []string{a.iss.URL(), testCallers}
	}
	return c
}

// testCallers is the issuer whoami's callers are of (Call.Caller is issuer#subject, as the HTTP
// layer fills it).
const testCallers = "https://callers.example"

// callerFor is the Call.Caller of the caller whose token is subject: one per token.
func callerFor(subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return testCallers + "#" + hex.EncodeToString(sum[:8])
}

// jwtClaims decodes a JWT's payload without verifying it.
var jwtClaims = mcptest.JWTClaims

// whoami calls alpha's whoami tool with a caller token both in the pass-through headers (where
// a careless integration might leave it) and as the subject, and returns the backend's view.
func whoami(r *Registry, subject string) (map[string]any, error) {
	s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`1`),
		Target:       Target{Upstream: "alpha", Name: mcptest.ToolWhoAmI},
		Params:       json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"name":"alpha__whoami","arguments":{}}`),
		Header:       http.Header{"Authorization": {"Bearer " + subject}, "Cookie": {"session=x"}},
		SubjectToken: subject, Caller: callerFor(subject),
	})
	if err != nil {
		return nil, err
	}
	var final []byte
	for range 100 {
		msg, done, err := s.Next()
		if err != nil {
			s.Close()
			return nil, err
		}
		if final = msg; done {
			break
		}
	}
	s.Close()
	var m map[string]any
	return m, json.Unmarshal(final, &m)
}

// lastBearer returns the bearer token of the backend's last request of a method.
func lastBearer(t *testing.T, s *mcptest.Server, method string) string {
	t.Helper()
	v := lastRequest(t, s, method).Header.Get("Authorization")
	tok, ok := strings.CutPrefix(v, "Bearer ")
	if !ok {
		t.Fatalf("%s reached the backend without a bearer token", method)
	}
	return tok
}

// assertNeverSent fails if secret appears in any header or body the backend received.
func assertNeverSent(t *testing.T, s *mcptest.Server, secret string) {
	t.Helper()
	for _, ex := range s.Requests() {
		for name, vs := range ex.Header {
			for _, v := range vs {
				if strings.Contains(v, secret) {
					t.Fatalf("the backend received the caller's token in %s", name)
				}
			}
		}
		if strings.Contains(string(ex.Body), secret) {
			t.Fatal("the backend received the caller's token in a body")
		}
	}
}

func TestClientCredentials(t *testing.T) {
	clock := newTestClock()
	as := startAuthServer(t, clock.Now)
	backend := mcptest.StartServer(t, "alpha")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: ProtocolVersion,
		Auth: as.auth(AuthClientCredentials, backend.URL())}}}, Options{Clock: clock.Now})
	caller, _ := as.iss.Mint(devissuer.Claims{"sub": "alice"})

	res, err := whoami(r, caller)
	if err != nil {
		t.Fatal(err)
	}
	if mcptest.Path(res, "result", "structuredContent", "authorization") != true || mcptest.Path(res, "result", "structuredContent", "cookie") != false {
		t.Fatalf("whoami = %v, want an Authorization and no Cookie", res)
	}
	first := lastBearer(t, backend, MethodToolsCall)
	c := jwtClaims(t, first)
	if c["sub"] != "gateway" || c["aud"] != backend.URL() || c["scope"] != "mcp:tools" {
		t.Fatalf("the backend's token has claims %v, want the gateway's own for this backend", c)
	}
	steps := []struct {
		name     string
		advance  time.Duration
		requests int64
		same     bool
	}{
		{"cached", time.Minute, 1, true},
		{"still before the refresh margin", 8 * time.Minute, 1, true},
		{"refreshed shortly before expiry", 31 * time.Second, 2, false},
	}
	for _, st := range steps {
		clock.Advance(st.advance)
		if _, err := whoami(r, caller); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got := lastBearer(t, backend, MethodToolsCall)
		if as.requests.Load() != st.requests || (got == first) != st.same {
			t.Fatalf("%s: %d token requests, same token %v; want %d, %v", st.name, as.requests.Load(), got == first, st.requests, st.same)
		}
	}
	assertNeverSent(t, backend, caller)
}

func TestClientCredentialsSingleFlightAndOutage(t *testing.T) {
	clock := newTestClock()
	as := startAuthServer(t, clock.Now)
	backend := mcptest.StartServer(t, "alpha")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: ProtocolVersion,
		Auth: as.auth(AuthClientCredentials, "")}}}, Options{Clock: clock.Now})
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = whoami(r, "") }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil || as.requests.Load() != 1 {
		t.Fatalf("8 concurrent first calls: %v, %d token requests; want one", err, as.requests.Load())
	}
	as.iss.SetDown(true)
	clock.Advance(9*time.Minute + 45*time.Second) // past the refresh margin, before expiry
	if _, err := whoami(r, ""); err != nil {
		t.Fatalf("a failed early refresh must keep the still valid token: %v", err)
	}
	clock.Advance(time.Minute) // expired
	calls := len(backend.RequestsOf(MethodToolsCall))
	_, err := whoami(r, "")
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrCredentials) || strings.Contains(err.Error(), "gw-secret") {
		t.Fatalf("call with the token endpoint down = %v, want ErrUnavailable and ErrCredentials, no secret", err)
	}
	if len(backend.RequestsOf(MethodToolsCall)) != calls {
		t.Fatal("a call without credentials reached the backend")
	}
	if r.CircuitStates()["alpha"] != CircuitClosed || !r.Health()[0].Up {
		t.Fatal("a token endpoint outage was charged to the backend")
	}
	as.iss.SetDown(false)
	if _, err := whoami(r, ""); err != nil {
		t.Fatalf("after the token endpoint recovered: %v", err)
	}
}

func TestTokenExchange(t *testing.T) {
	as := startAuthServer(t, nil)
	backend := mcptest.StartServer(t, "alpha")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: ProtocolVersion,
		Auth: as.auth(AuthTokenExchange, backend.URL())}}}, Options{})
	alice, _ := as.iss.Mint(devissuer.Claims{"sub": "alice"})
	bob, _ := as.iss.Mint(devissuer.Claims{"sub": "bob"})
	tests := []struct {
		subject, wantSub string
		requests         int64
	}{
		{alice, "alice", 1},
		{alice, "alice", 1}, // cached by digest of the subject token
		{bob, "bob", 2},
	}
	for i, tt := range tests {
		if _, err := whoami(r, tt.subject); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		c := jwtClaims(t, lastBearer(t, backend, MethodToolsCall))
		act, _ := c["act"].(map[string]any)
		if c["sub"] != tt.wantSub || c["aud"] != backend.URL() || act["sub"] != "gateway" || as.requests.Load() != tt.requests {
			t.Fatalf("call %d: backend token claims %v after %d exchanges; want sub %s, aud the backend, actor gateway, %d exchanges",
				i, c, as.requests.Load(), tt.wantSub, tt.requests)
		}
	}
	if _, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList, SubjectToken: alice, CacheKey: callerFor(alice),
		Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)}); err != nil {
		t.Fatal(err)
	}
	if c := jwtClaims(t, lastBearer(t, backend, MethodToolsList)); c["sub"] != "alice" {
		t.Fatalf("tools/list went with claims %v, want alice's exchanged token", c)
	}
	if _, err := r.Capabilities(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if c := jwtClaims(t, lastBearer(t, backend, MethodDiscover)); c["sub"] != "gateway" {
		t.Fatalf("the gateway's own discover went with claims %v, want its client-credentials token", c)
	}
	assertNeverSent(t, backend, alice)
	assertNeverSent(t, backend, bob)
}

func TestTokenExchangeRefused(t *testing.T) {
	as := startAuthServer(t, nil)
	backend := mcptest.StartServer(t, "alpha")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: ProtocolVersion,
		Auth: as.auth(AuthTokenExchange, backend.URL())}}}, Options{})
	good, _ := as.iss.Mint(devissuer.Claims{"sub": "alice"})
	for name, subject := range map[string]string{"no caller token": "", "tampered": devissuer.TamperSignature(good)} {
		t.Run(name, func(t *testing.T) {
			_, err := whoami(r, subject)
			if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrCredentials) {
				t.Fatalf("err = %v, want ErrUnavailable and ErrCredentials", err)
			}
			if len(backend.RequestsOf(MethodToolsCall)) != 0 {
				t.Fatal("a call without an exchanged token reached the backend")
			}
		})
	}
}

func TestAuthConfigValidate(t *testing.T) {
	ok := AuthConfig{Type: AuthClientCredentials, TokenURL: "https://idp.example/token", ClientID: "gw", ClientSecret: "s"}
	tests := []struct {
		name    string
		mod     func(*UpstreamConfig)
		wantErr string
	}{
		{"valid", func(*UpstreamConfig) {}, ""},
		{"loopback http", func(u *UpstreamConfig) { u.Auth.TokenURL = "http://127.0.0.1:9/token" }, ""},
		{"unknown type", func(u *UpstreamConfig) { u.Auth.Type = "password" }, "auth.type"},
		{"clear-text token URL", func(u *UpstreamConfig) { u.Auth.TokenURL = "http://idp.example/token" }, "https"},
		{"no secret", func(u *UpstreamConfig) { u.Auth.ClientSecret = "" }, "clientSecret"},
		{"with an Authorization header", func(u *UpstreamConfig) { u.Headers = map[string]string{"authorization": "Bearer x"} }, "exclude"},
		{"user info with auth", func(u *UpstreamConfig) { u.URL = "https://gw:pw@alpha.example/mcp" }, "user information"},
		{"user info with an Authorization header", func(u *UpstreamConfig) {
			u.URL, u.Auth, u.Headers = "https://gw:pw@alpha.example/mcp", AuthConfig{}, map[string]string{"AUTHORIZATION": "Bearer x"}
		}, "user information"},
		{"user info alone", func(u *UpstreamConfig) { u.URL, u.Auth = "https://gw:pw@alpha.example/mcp", AuthConfig{} }, ""},
		{"negative timeout", func(u *UpstreamConfig) { u.Auth.Timeout = -1 }, "negative"},
		{"legacy sessions for exchange", func(u *UpstreamConfig) {
			u.Auth.Type, u.Auth.MaxLegacySessions, u.Auth.LegacySessionIdle = AuthTokenExchange, 10, time.Minute
			u.Auth.SubjectIssuers = []string{"https://id.example"}
		}, ""},
		{"exchange without subject issuers", func(u *UpstreamConfig) { u.Auth.Type = AuthTokenExchange }, "subjectIssuers: required"},
		{"a subject issuer that is no URL", func(u *UpstreamConfig) {
			u.Auth.Type, u.Auth.SubjectIssuers = AuthTokenExchange, []string{"https://id.example", "id#x"}
		}, "subjectIssuers[1]"},
		{"subject issuers without exchange", func(u *UpstreamConfig) { u.Auth.SubjectIssuers = []string{"https://id.example"} }, "tokenExchange only"},
		{"negative legacy sessions", func(u *UpstreamConfig) { u.Auth.Type, u.Auth.MaxLegacySessions = AuthTokenExchange, -1 }, "negative"},
		{"legacy sessions without exchange", func(u *UpstreamConfig) { u.Auth.MaxLegacySessions = 10 }, "tokenExchange only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uc := UpstreamConfig{Name: "alpha", URL: "https://alpha.example/mcp", Auth: ok}
			tt.mod(&uc)
			err := (&Config{Upstreams: []UpstreamConfig{uc}}).Validate()
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate = %v, want %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "Bearer x") {
				t.Fatal("Validate reported a secret")
			}
		})
	}
}

// TestSubjectTokenOnlyForTokenExchange: the caller's token is kept for a request only to a
// backend configured for token exchange; every other backend's request never holds it.
func TestSubjectTokenOnlyForTokenExchange(t *testing.T) {
	as := startAuthServer(t, nil)
	backend := mcptest.StartServer(t, "alpha")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "exchange", URL: backend.URL(), Protocol: ProtocolVersion, Auth: as.auth(AuthTokenExchange, backend.URL())},
		{Name: "client", URL: backend.URL(), Protocol: ProtocolVersion, Auth: as.auth(AuthClientCredentials, backend.URL())},
		{Name: "static", URL: backend.URL(), Protocol: ProtocolVersion},
	}}, Options{})
	for name, want := range map[string]string{"exchange": "tok", "client": "", "static": ""} {
		if got := r.byName[name].SubjectFor("tok"); got != want {
			t.Errorf("%s: subjectFor = %q, want %q", name, got, want)
		}
	}
}
