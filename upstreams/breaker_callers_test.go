package upstreams

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// failPoison answers 503 to any request whose body holds "poison", as a backend (or its proxy)
// does for arguments it cannot handle.
func failPoison(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte("poison")) {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// TestOneCallerCannotOpenBackendCircuit: against a real go-sdk backend of each era, one
// authenticated caller whose arguments make the backend answer 503, and another whose calls make
// it hang past its timeout, each open only their own circuit: their next calls fail at once,
// unsent, while a third caller's calls still reach the backend, the shared circuit stays closed
// and the backend's health stays up. Once the backend is gone (connections refused, which no
// caller's arguments cause), one caller's failures open the shared circuit for everyone.
func TestOneCallerCannotOpenBackendCircuit(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "2026-07-28", true: "2025-11-25"}[legacy], func(t *testing.T) {
			start := mcptest.StartServer
			if legacy {
				start = mcptest.StartLegacyServer
			}
			alpha := start(t, "alpha", mcptest.WithMiddleware(failPoison))
			var log stateLog
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: alpha.URL(), Timeout: 300 * time.Millisecond,
				Breaker: BreakerConfig{Failures: 3, Cooldown: time.Hour}}}}, Options{CircuitState: log.hook})
			ctx := context.Background()
			if err := callAs(ctx, r, "echo", `{"text":"hi"}`, "", "iss#bob"); err != nil {
				t.Fatalf("bob: %v", err)
			}
			for _, c := range []struct{ who, tool, args string }{
				{"iss#alice", "echo", `{"text":"poison"}`},
				{"iss#carol", "slow", `{"ms":60000}`},
			} {
				for i := range 3 {
					if err := callAs(ctx, r, c.tool, c.args, "", c.who); err == nil || errors.Is(err, ErrCircuitOpen) {
						t.Fatalf("%s's call %d = %v, want the backend's failure", c.who, i, err)
					}
				}
				seen := toolCalls(alpha)
				if err := callAs(ctx, r, "echo", `{"text":"fine"}`, "", c.who); !errors.Is(err, ErrCircuitOpen) || !errors.Is(err, ErrUnavailable) {
					t.Fatalf("%s with its own circuit open: %v", c.who, err)
				}
				if err := callAs(ctx, r, "echo", `{"text":"hi"}`, "", "iss#bob"); err != nil {
					t.Fatalf("bob after %s's failures: %v", c.who, err)
				}
				if n := toolCalls(alpha); n != seen+1 {
					t.Fatalf("%d calls reached the backend, want bob's only (%d before)", n, seen)
				}
			}
			if got := log.get(); slices.Contains(got, CircuitOpen) || r.CircuitStates()["alpha"] != CircuitClosed {
				t.Fatalf("one caller's failures moved the shared circuit: %v", got)
			}
			if h := r.Health()[0]; !h.Up {
				t.Fatalf("one caller's failures marked the backend down for everyone: %+v", h)
			}
			// A backend that is gone (nothing listens: connections are refused, which no
			// caller's arguments cause): bob alone, a one-caller deployment, stops waiting on it.
			protocol := ProtocolVersion
			if legacy {
				protocol = "2025-11-25"
			}
			gone := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: deadURL(t), Protocol: protocol,
				Breaker: BreakerConfig{Failures: 3, Cooldown: time.Hour}}}}, Options{})
			// (A pre-2026 backend's failed session handshake counts too, so its circuit may
			// open after fewer of bob's calls.)
			for i := range 3 {
				err := callAs(ctx, gone, "echo", `{"text":"hi"}`, "", "iss#bob")
				if errors.Is(err, ErrCircuitOpen) && !errors.Is(err, ErrCallerCircuitOpen) && i > 0 {
					break
				}
				if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCircuitOpen) {
					t.Fatalf("bob's call %d to a closed backend: %v", i, err)
				}
			}
			if err := callAs(ctx, gone, "echo", `{"text":"hi"}`, "", "iss#dave"); !errors.Is(err, ErrCircuitOpen) || errors.Is(err, ErrCallerCircuitOpen) {
				t.Fatalf("dave, after connections were refused: %v", err)
			}
		})
	}
}

// TestTLSFailureOpensCircuit: a TLS handshake that fails (a certificate the gateway does not
// trust) is nobody's arguments: one caller's failed calls open the circuit for every caller.
func TestTLSFailureOpensCircuit(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: srv.URL + "/mcp", Protocol: ProtocolVersion,
		Breaker: BreakerConfig{Failures: 2, Cooldown: time.Hour}}}}, Options{})
	for range 2 {
		if err := callAs(context.Background(), r, "echo", `{}`, "", "iss#alice"); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("alice: %v", err)
		}
	}
	if err := callAs(context.Background(), r, "echo", `{}`, "", "iss#bob"); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("bob after failed handshakes: %v", err)
	}
}

// toolCalls counts the tools/call requests s received, in either era.
func toolCalls(s *mcptest.Server) int {
	n := 0
	for _, ex := range s.Requests() {
		if legacyMethod(ex) == MethodToolsCall {
			n++
		}
	}
	return n
}

// TestHungBackendOneCaller: a one-caller deployment whose backend hangs (it accepts connections
// and never answers) stops waiting on it: the caller's own circuit opens after its timeouts, and
// the health probe's failures, which no caller causes, then open the shared circuit too, so a
// caller the backend never saw fails at once as well.
func TestHungBackendOneCaller(t *testing.T) {
	hung := startHungBackend(t)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: hung.url, Protocol: ProtocolVersion,
		Timeout: 200 * time.Millisecond, Breaker: BreakerConfig{Failures: 3, Cooldown: time.Hour}}}}, Options{})
	ctx := context.Background()
	for i := range 3 {
		if err := callAs(ctx, r, "echo", `{}`, "", "iss#alice"); !errors.Is(err, ErrTimeout) {
			t.Fatalf("alice's call %d: %v, want ErrTimeout", i, err)
		}
	}
	if err := callAs(ctx, r, "echo", `{}`, "", "iss#alice"); !errors.Is(err, ErrCallerCircuitOpen) {
		t.Fatalf("alice after three timeouts: %v", err)
	}
	if st := r.CircuitStates()["alpha"]; st != CircuitClosed {
		t.Fatalf("one caller's timeouts moved the shared circuit to %d", st)
	}
	r.probe(ctx, false) // the health probe times out too: nobody's arguments
	if st := r.CircuitStates()["alpha"]; st != CircuitOpen {
		t.Fatalf("state %d after the caller's timeouts and a failed health probe, want open", st)
	}
	if err := callAs(ctx, r, "echo", `{}`, "", "iss#bob"); !errors.Is(err, ErrCircuitOpen) || errors.Is(err, ErrCallerCircuitOpen) {
		t.Fatalf("bob with the shared circuit open: %v", err)
	}
}

// TestCallerSessionHandshakeChargedToCaller: a pre-2026 token-exchange backend that fails the
// handshake of one caller's own session (HTTP 503 to initialize with alice's exchanged token)
// opens only alice's circuit: the handshake's failure is the caller's, not the backend's, and
// bob's calls still reach the backend.
func TestCallerSessionHandshakeChargedToCaller(t *testing.T) {
	as := startAuthServer(t, nil)
	alpha := mcptest.StartLegacyServer(t, "alpha", mcptest.WithMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"initialize"`)) && bearerSub(t, mcptest.Exchange{Header: r.Header}) == "alice" {
				http.Error(w, "overloaded", http.StatusServiceUnavailable)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}))
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: alpha.URL(), Protocol: "2025-11-25",
		Auth: as.auth(AuthTokenExchange, alpha.URL()), Breaker: BreakerConfig{Failures: 2, Cooldown: time.Hour}}}}, Options{})
	alice, _ := as.iss.Mint(devissuer.Claims{"sub": "alice"})
	bob, _ := as.iss.Mint(devissuer.Claims{"sub": "bob"})
	ctx := context.Background()
	for i := range 2 {
		if err := callAs(ctx, r, "echo", `{"text":"hi"}`, alice, as.iss.URL()+"#alice"); err == nil || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("alice's call %d: %v, want her session's failed handshake", i, err)
		}
	}
	if err := callAs(ctx, r, "echo", `{"text":"hi"}`, alice, as.iss.URL()+"#alice"); !errors.Is(err, ErrCallerCircuitOpen) {
		t.Fatalf("alice after two failed handshakes: %v", err)
	}
	if err := callAs(ctx, r, "echo", `{"text":"hi"}`, bob, as.iss.URL()+"#bob"); err != nil {
		t.Fatalf("bob: %v", err)
	}
	if st := r.CircuitStates()["alpha"]; st != CircuitClosed {
		t.Fatalf("alice's failed handshakes moved the shared circuit to %d", st)
	}
}
