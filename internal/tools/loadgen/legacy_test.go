package loadgen

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/mcphttp/pre2026"
	"github.com/mcp-gateway/gateway/upstreams"
)

// legacyTally counts what reached the gateway from the harness's legacy client, and records
// every request that a 2025-11-25 client would not send.
type legacyTally struct {
	mu          sync.Mutex
	initialize  int
	initialized int
	calls       int
	problems    []string
}

// wrap records each request, then hands it, body intact, to next.
func (l *legacyTally) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		m, err := jsonrpc.DecodeMessage(body, jsonrpc.Limits{})
		l.mu.Lock()
		problem := func(s string) { l.problems = append(l.problems, m.Method+": "+s) }
		switch {
		case err != nil:
			l.problems = append(l.problems, "undecodable body: "+err.Error())
		case r.Header.Get(mcpheader.Method) != "" || r.Header.Get(mcpheader.Name) != "":
			problem("Mcp-Method or Mcp-Name sent")
		case bytes.Contains(body, []byte("io.modelcontextprotocol/")):
			problem("_meta protocol keys sent")
		case m.Method == "initialize":
			l.initialize++
			if r.Header.Get(mcpheader.ProtocolVersion) != "" || r.Header.Get(mcpheader.SessionID) != "" {
				problem("version or session header on initialize")
			}
		case r.Header.Get(mcpheader.SessionID) == "" || r.Header.Get(mcpheader.ProtocolVersion) != LegacyProtocolVersion:
			problem("no session id or no 2025-11-25 version header")
		case m.Method == "notifications/initialized":
			l.initialized++
		case m.Method == "tools/call":
			l.calls++
		}
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// startLegacyGateway serves the gateway's MCP endpoint, pre-2026 clients on, in front of the
// harness's backend named "fast", with tally watching every request.
func startLegacyGateway(t *testing.T, tally *legacyTally) string {
	t.Helper()
	_, backendURL := startBackend(t, BackendConfig{Tools: 3})
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "t", Secret: bytes.Repeat([]byte("k"), 32)}}})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	reg, err := upstreams.New(upstreams.Config{Upstreams: []upstreams.UpstreamConfig{{Name: "fast", URL: backendURL}}},
		upstreams.Options{Logger: logger, Cursors: ring.Sealer(seal.PurposeCursor)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	edge, err := pre2026.New(pre2026.Config{Enabled: true}, pre2026.Deps{Keys: ring, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	s, err := mcphttp.New(mcphttp.Config{}, mcphttp.Deps{Backends: reg, Logger: logger, Loopback: true, Edge: edge, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	s.Register(e)
	srv := httptest.NewServer(tally.wrap(e))
	t.Cleanup(srv.Close)
	return srv.URL + mcphttp.DefaultPath
}

// TestLegacyCallThroughGateway: the legacy-call mix speaks 2025-11-25 to the real gateway
// edge; each worker initializes and sends notifications/initialized once for the runner's
// life (warm-up included), and every call succeeds in the 2025-11-25 shape.
func TestLegacyCallThroughGateway(t *testing.T) {
	tally := &legacyTally{}
	url := startLegacyGateway(t, tally)
	const workers = 3
	r, err := New(Config{URL: url, Concurrency: workers, Requests: 30, Mix: Mix{{OpLegacyCall, 1}}, Tool: "fast__echo"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for run := range 2 {
		rep, err := r.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		calls := rep.Ops[string(OpLegacyCall)]
		if calls == nil || calls.Operations != 30 || calls.Errors != 0 || calls.HTTPRequests != 30 {
			t.Fatalf("run %d: legacy-call %+v, want 30 operations and HTTP requests, no errors (%v)", run, calls, rep.Total.ErrorsByKind)
		}
		init := rep.Ops[string(OpLegacyInit)]
		switch {
		case run == 0 && (init == nil || init.Operations != workers || init.Errors != 0 || init.HTTPRequests != 2*workers):
			t.Fatalf("first run: legacy-init %+v, want %d handshakes of 2 requests, no errors", init, workers)
		case run == 1 && init != nil:
			t.Fatalf("second run: legacy-init %+v, want none (sessions kept)", init)
		}
	}
	tally.mu.Lock()
	defer tally.mu.Unlock()
	if len(tally.problems) > 0 {
		t.Fatalf("not what a 2025-11-25 client sends:\n%s", strings.Join(tally.problems, "\n"))
	}
	if tally.initialize != workers || tally.initialized != workers || tally.calls != 60 {
		t.Fatalf("gateway saw %d initialize, %d notifications/initialized, %d calls; want %d, %d, 60",
			tally.initialize, tally.initialized, tally.calls, workers, workers)
	}
}

// TestLegacyCallChecks: a result that carries resultType is not what a pre-2026 client may
// get, and a 404 (the session is gone) makes the worker initialize again.
func TestLegacyCallChecks(t *testing.T) {
	var mu sync.Mutex
	inits, calls := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, err := jsonrpc.DecodeMessage(body, jsonrpc.Limits{})
		if err != nil {
			t.Errorf("invalid request: %v", err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "initialize":
			inits++
			w.Header().Set(mcpheader.SessionID, "s1")
			w.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"`+LegacyProtocolVersion+`","capabilities":{}}`)))
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		default:
			calls++
			if calls == 1 {
				w.WriteHeader(http.StatusNotFound)
				w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Session not found; re-initialize"}}`))
				return
			}
			w.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"resultType":"complete","content":[]}`)))
		}
	}))
	defer srv.Close()
	rep := runLoad(t, Config{URL: srv.URL + "/mcp", Requests: 3, Mix: Mix{{OpLegacyCall, 1}}})
	got := rep.Ops[string(OpLegacyCall)]
	if got == nil || got.Errors != 3 || got.ErrorsByKind["rpc_-32600"] != 1 || got.ErrorsByKind[KindBadResult] != 2 {
		t.Fatalf("legacy-call %+v, want one rpc_-32600 (session gone) and two bad_result (resultType)", got)
	}
	if inits != 2 {
		t.Fatalf("%d initialize, want 2 (once more after the 404)", inits)
	}
}
