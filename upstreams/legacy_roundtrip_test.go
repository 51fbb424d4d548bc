package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
	"github.com/mcp-gateway/gateway/upstreams/legacy"
)

// callAs calls alpha's tool as one caller: subject is the caller's verified token, caller its
// identity (issuer#subject), as the HTTP layer fills them for a token-exchange backend.
func callAs(ctx context.Context, r *Registry, tool, args, subject, caller string) error {
	s, err := r.Call(ctx, &Call{Method: MethodToolsCall, ID: json.RawMessage(`7`),
		Target:       Target{Upstream: "alpha", Name: tool},
		Params:       json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"name":"alpha__` + tool + `","arguments":` + args + `}`),
		SubjectToken: subject, Caller: caller,
	})
	if err != nil {
		return err
	}
	return drain(s)
}

// legacyMethod is the JSON-RPC method of a request a legacy backend received (legacy requests
// carry no Mcp-Method header).
func legacyMethod(ex mcptest.Exchange) string {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(ex.Body, &m)
	return m.Method
}

// bearerSub is the "sub" of the bearer token of a request, "" without one.
func bearerSub(t *testing.T, ex mcptest.Exchange) string {
	t.Helper()
	tok, ok := strings.CutPrefix(ex.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	sub, _ := jwtClaims(t, tok)["sub"].(string)
	return sub
}

// sessionOwners maps each session the backend assigned to the subject of the token its
// initialize carried, and checks that every later request on a session came with a token of
// that same subject: a session is never used by another identity.
func sessionOwners(t *testing.T, backend *mcptest.Server) map[string]string {
	t.Helper()
	owners := map[string]string{}
	for _, ex := range backend.Requests() {
		if legacyMethod(ex) == era.MethodInitialize {
			if id := ex.ResponseHeader.Get("Mcp-Session-Id"); id != "" {
				owners[id] = bearerSub(t, ex)
			}
		}
	}
	for _, ex := range backend.Requests() {
		id := ex.Header.Get("Mcp-Session-Id")
		if id == "" || ex.Method == "DELETE" {
			continue
		}
		if got := bearerSub(t, ex); got != owners[id] {
			t.Fatalf("a %s %s on %s's session came as %q", ex.Method, legacyMethod(ex), owners[id], got)
		}
	}
	return owners
}

// TestLegacyTokenExchangePerCaller: a token-exchange backend that speaks 2025-11-25 (learnt
// with protocol auto, or pinned) sees each caller as itself, on a session of its own, on calls
// and lists alike, and never as the gateway; a call without the caller's token is refused
// before anything is sent.
func TestLegacyTokenExchangePerCaller(t *testing.T) {
	for _, protocol := range []string{ProtocolAuto, era.V20251125} {
		t.Run(protocol, func(t *testing.T) {
			as := startAuthServer(t, nil)
			backend := mcptest.StartLegacyServer(t, "alpha")
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: protocol,
				Auth: as.auth(AuthTokenExchange, backend.URL())}}}, Options{})
			alice, _ := as.iss.Mint(devissuer.Claims{"sub": "alice"})
			bob, _ := as.iss.Mint(devissuer.Claims{"sub": "bob"})
			tokens := map[string]string{"alice": alice, "bob": bob}
			ctx := context.Background()
			for i, who := range []string{"alice", "bob", "alice", "bob"} {
				if err := callAs(ctx, r, mcptest.ToolWhoAmI, `{}`, tokens[who], as.iss.URL()+"#"+who); err != nil {
					t.Fatalf("call %d as %s: %v", i, who, err)
				}
				if got := bearerSub(t, lastLegacyRequest(t, backend, MethodToolsCall)); got != who {
					t.Fatalf("call %d as %s reached the backend as %q", i, who, got)
				}
			}
			if _, err := r.List(ctx, &ListRequest{Method: MethodToolsList, SubjectToken: alice, CacheKey: as.iss.URL() + "#alice",
				Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)}); err != nil {
				t.Fatal(err)
			}
			if got := bearerSub(t, lastLegacyRequest(t, backend, MethodToolsList)); got != "alice" {
				t.Fatalf("alice's tools/list reached the backend as %q", got)
			}

			owners := sessionOwners(t, backend)
			bySub := map[string]int{}
			for _, sub := range owners {
				bySub[sub]++
			}
			if bySub["alice"] != 1 || bySub["bob"] != 1 {
				t.Fatalf("sessions by owner %v, want one for alice and one for bob", bySub)
			}
			for _, ex := range backend.Requests() {
				if m := legacyMethod(ex); m != MethodDiscover && bearerSub(t, ex) == "gateway" {
					t.Fatalf("a %s reached the backend as the gateway", m)
				}
			}
			assertNeverSent(t, backend, alice)
			assertNeverSent(t, backend, bob)

			before := len(backend.Requests())
			err := callAs(ctx, r, mcptest.ToolWhoAmI, `{}`, "", as.iss.URL()+"#carol")
			if !errors.Is(err, ErrCredentials) {
				t.Fatalf("a call without the caller's token: err = %v, want ErrCredentials", err)
			}
			if n := len(backend.Requests()); n != before {
				t.Fatalf("a call without the caller's token sent %d requests", n-before)
			}
		})
	}
}

// lastLegacyRequest returns the last request of a JSON-RPC method a legacy backend received.
func lastLegacyRequest(t *testing.T, s *mcptest.Server, method string) mcptest.Exchange {
	t.Helper()
	ex := s.Requests()
	for i := len(ex) - 1; i >= 0; i-- {
		if legacyMethod(ex[i]) == method {
			return ex[i]
		}
	}
	t.Fatalf("backend %s received no %s", s.Name(), method)
	return mcptest.Exchange{}
}

// TestLegacyCallerSessionsBounded: the per-caller sessions of a token-exchange legacy backend
// are bounded in number (the least recently used idle one makes room, and is ended with
// DELETE), expire when idle, and a caller is refused rather than put on another caller's
// session when every one is in use.
func TestLegacyCallerSessionsBounded(t *testing.T) {
	as := startAuthServer(t, nil)
	backend := mcptest.StartLegacyServer(t, "alpha")
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	advance := func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
	}
	auth := as.auth(AuthTokenExchange, backend.URL())
	auth.MaxLegacySessions, auth.LegacySessionIdle = 2, time.Hour
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: backend.URL(), Protocol: era.V20251125,
		Auth: auth}}}, Options{Clock: clock})
	b := r.byName["alpha"]
	ctx := context.Background()
	mint := func(who string) string {
		tok, _ := as.iss.Mint(devissuer.Claims{"sub": who, "exp": clock().Add(2 * time.Hour).Unix()})
		return tok
	}
	call := func(who string) error {
		return callAs(ctx, r, mcptest.ToolEcho, `{"text":"x"}`, mint(who), as.iss.URL()+"#"+who)
	}
	deletes := func() int {
		n := 0
		for _, ex := range backend.Requests() {
			if ex.Method == "DELETE" {
				n++
			}
		}
		return n
	}
	for _, who := range []string{"a", "b"} {
		if err := call(who); err != nil {
			t.Fatal(err)
		}
		advance(time.Minute)
	}
	if err := call("c"); err != nil { // a, least recently used, makes room
		t.Fatal(err)
	}
	if n := b.Bridge().Callers(); n != 2 {
		t.Fatalf("%d callers hold sessions, want the bound 2", n)
	}
	mcptest.WaitFor(t, "the evicted session to be ended", func() bool { return deletes() == 1 })

	// Two callers hold their sessions with slow calls; a third is refused, not let onto theirs.
	slowCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for _, who := range []string{"b", "c"} {
		tok := mint(who)
		wg.Go(func() { _ = callAs(slowCtx, r, mcptest.ToolSlow, `{"ms":60000}`, tok, as.iss.URL()+"#"+who) })
	}
	wait, cancelWait := context.WithTimeout(ctx, 30*time.Second)
	defer cancelWait()
	if err := backend.WaitSlow(wait, func(s mcptest.SlowStats) bool { return s.Started == 2 }); err != nil {
		t.Fatal(err)
	}
	inits := countLegacy(backend, era.MethodInitialize)
	if err := call("d"); !errors.Is(err, ErrUnavailable) || !errors.Is(err, legacy.ErrSessionsFull) {
		t.Fatalf("a new caller while every session is in use: err = %v, want ErrUnavailable (sessions full)", err)
	}
	if n := countLegacy(backend, era.MethodInitialize); n != inits {
		t.Fatal("a refused caller opened a session")
	}
	if st := b.CircuitState(); st != CircuitClosed {
		t.Fatalf("the session limit was charged to the backend: circuit %d", st)
	}
	stop()
	wg.Wait()

	// Idle sessions expire: after the idle time a new caller finds b and c gone.
	advance(2 * time.Hour)
	if err := call("e"); err != nil {
		t.Fatal(err)
	}
	if n := b.Bridge().Callers(); n != 1 {
		t.Fatalf("%d callers hold sessions after the others idled out, want 1", n)
	}
	mcptest.WaitFor(t, "the idle sessions to be ended", func() bool { return deletes() == 3 })
}

// countLegacy counts the requests of a JSON-RPC method a legacy backend received.
func countLegacy(s *mcptest.Server, method string) int {
	n := 0
	for _, ex := range s.Requests() {
		if legacyMethod(ex) == method {
			n++
		}
	}
	return n
}
