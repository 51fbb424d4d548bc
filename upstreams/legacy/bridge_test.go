package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// legacyServer is a 2025-11-25 Streamable HTTP server written for the test: it decodes every
// message with encoding/json the way a Go server does, assigns session ids at initialize,
// answers 404 for a session it does not know, and records what it received.
type legacyServer struct {
	*httptest.Server
	mu       sync.Mutex
	sessions map[string]bool
	next     int
	methods  []string // method of every message, in order
	replies  []string // the body of every response the gateway sent it
	// askFirst, when set, is a request the server sends on the response stream of initialize
	// and of logging/setLevel before their results, as a server that ignores the lifecycle
	// rules might.
	askFirst string
	auth     []string // Authorization of every request
	headers  []http.Header
}

func startLegacyServer(t *testing.T) *legacyServer {
	t.Helper()
	ls := &legacyServer{sessions: map[string]bool{}}
	ls.Server = httptest.NewServer(http.HandlerFunc(ls.serve))
	t.Cleanup(ls.Close)
	return ls
}

func (ls *legacyServer) serve(w http.ResponseWriter, r *http.Request) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.auth = append(ls.auth, r.Header.Get("Authorization"))
	ls.headers = append(ls.headers, r.Header.Clone())
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method == http.MethodDelete {
		delete(ls.sessions, sid)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params,omitempty"`
		Result json.RawMessage `json:"result,omitempty"`
		Error  json.RawMessage `json:"error,omitempty"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	ls.methods = append(ls.methods, msg.Method)
	if msg.Method == "" {
		b, _ := json.Marshal(msg)
		ls.replies = append(ls.replies, string(b))
	}
	if msg.Method == "initialize" {
		ls.next++
		sid = "s" + strings.Repeat("x", ls.next)
		ls.sessions[sid] = true
		w.Header().Set("Mcp-Session-Id", sid)
	}
	if ls.askFirst != "" && (msg.Method == "initialize" || msg.Method == "logging/setLevel") {
		w.Header().Set("Content-Type", "text/event-stream")
		result := `{}`
		if msg.Method == "initialize" {
			result = `{"protocolVersion":"2025-11-25","capabilities":{"logging":{}},"serverInfo":{"name":"old","version":"1"}}`
		}
		_, _ = io.WriteString(w, "event: message\ndata: "+ls.askFirst+"\n\n"+
			"event: message\ndata: "+`{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":`+result+"}\n\n")
		return
	}
	if msg.Method == "initialize" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"protocolVersion":"2025-11-25",`+
			`"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"old","version":"1"},"instructions":"hi"}}`)
		return
	}
	if !ls.sessions[sid] {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"content":[{"type":"text","text":"ok"}]}}`)
}

func (ls *legacyServer) expire() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	clear(ls.sessions)
}

func (ls *legacyServer) seen() []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return append([]string(nil), ls.methods...)
}

// testBackend is a Backend as upstreams gives it.
type testBackend struct {
	url    string
	creds  bool
	mu     sync.Mutex
	failed []string
}

func (b *testBackend) Name() string { return "old" }
func (b *testBackend) URL() string  { return b.url }
func (b *testBackend) Header() http.Header {
	return http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
}
func (b *testBackend) Client() *http.Client      { return http.DefaultClient }
func (b *testBackend) Timeout() time.Duration    { return 5 * time.Second }
func (b *testBackend) MaxBytes() int64           { return 1 << 20 }
func (b *testBackend) Results() *bodyread.Budget { return nil }
func (b *testBackend) HasCredentials() bool      { return b.creds }

func (b *testBackend) Authorization(_ context.Context, subject, _ string, fromCaller bool) (string, error) {
	if fromCaller {
		return "Bearer exchanged-for-" + subject, nil
	}
	return "Bearer gateway", nil
}

func (b *testBackend) Failed(method string, _ bool, _ time.Time, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failed = append(b.failed, method+": "+err.Error())
}

func newTestBridge(t *testing.T, ls *legacyServer, creds bool, maxCallers int) (*Bridge, *testBackend) {
	t.Helper()
	be := &testBackend{url: ls.URL, creds: creds}
	br := New(be, Config{Offer: era.V20251125, ClientInfo: json.RawMessage(`{"name":"mcp-gateway","version":"test"}`), MaxCallers: maxCallers})
	t.Cleanup(br.Close)
	return br, be
}

func call(t *testing.T, ctx context.Context, br *Bridge, pool *Pool, give func()) string {
	t.Helper()
	x, err := br.Start(ctx, pool, give, &era.Request{Method: "tools/call", Params: json.RawMessage(`{"name":"echo"}`)}, nil, nil)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer x.Release()
	m, err := x.Next(ctx)
	if err != nil || !m.IsResponse() {
		t.Fatalf("Next: %v, %v", m, err)
	}
	x.End(ctx, NotAbandoned)
	return string(m.Result)
}

// TestBridgeHandshakeAndCall: a call opens a session with initialize and
// notifications/initialized, then goes on it with the session id and the negotiated version.
func TestBridgeHandshakeAndCall(t *testing.T) {
	ls := startLegacyServer(t)
	br, _ := newTestBridge(t, ls, false, 0)
	ctx := context.Background()
	if got := call(t, ctx, br, br.Gateway(), nil); !strings.Contains(got, `"ok"`) {
		t.Fatalf("result %s", got)
	}
	if got := strings.Join(ls.seen(), ","); got != "initialize,notifications/initialized,tools/call" {
		t.Fatalf("the backend saw %s", got)
	}
	last := ls.headers[len(ls.headers)-1]
	if last.Get("Mcp-Session-Id") != "sx" || last.Get("Mcp-Protocol-Version") != "2025-11-25" {
		t.Fatalf("the call went with %v", last)
	}
	init, err := br.InitResult(ctx)
	if err != nil || init.Version != era.V20251125 || init.Instructions != "hi" || !strings.Contains(string(init.Capabilities), "listChanged") {
		t.Fatalf("InitResult %+v, %v", init, err)
	}
}

// TestBridgeReinitializesAnExpiredSession: a 404 to a request carrying a session id opens a
// new session and sends the request once more.
func TestBridgeReinitializesAnExpiredSession(t *testing.T) {
	ls := startLegacyServer(t)
	br, _ := newTestBridge(t, ls, false, 0)
	ctx := context.Background()
	call(t, ctx, br, br.Gateway(), nil)
	ls.expire()
	call(t, ctx, br, br.Gateway(), nil)
	want := "initialize,notifications/initialized,tools/call,tools/call,initialize,notifications/initialized,tools/call"
	if got := strings.Join(ls.seen(), ","); got != want {
		t.Fatalf("the backend saw %s, want %s", got, want)
	}
}

// TestBridgeCallerSessions: a caller's session authenticates with the caller's exchanged token
// and only for that caller; the number of callers is bounded while their sessions are in use.
func TestBridgeCallerSessions(t *testing.T) {
	ls := startLegacyServer(t)
	br, _ := newTestBridge(t, ls, true, 1)
	alice := WithCaller(context.Background(), "alice-token", "")
	pool, give, err := br.CallerPool([32]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	x, err := br.Start(alice, pool, give, &era.Request{Method: "tools/call", Params: json.RawMessage(`{}`)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ls.auth {
		if a != "Bearer exchanged-for-alice-token" {
			t.Fatalf("a request of alice's session went with %q", a)
		}
	}
	// While alice's session is in use, another caller has no room.
	if _, _, err := br.CallerPool([32]byte{2}); !errors.Is(err, ErrSessionsFull) || !errors.Is(err, wire.ErrUnavailable) {
		t.Fatalf("a second caller over the bound: %v", err)
	}
	// The gateway's own request never goes on a caller's session.
	if _, err := br.Start(context.Background(), pool, nil, &era.Request{Method: "tools/list"}, nil, nil); !errors.Is(err, wire.ErrCredentials) {
		t.Fatalf("a gateway request on a caller's session: %v", err)
	}
	x.Release()
	if br.Callers() != 1 {
		t.Fatalf("callers %d, want 1", br.Callers())
	}
	if _, give, err := br.CallerPool([32]byte{2}); err != nil {
		t.Fatalf("once alice's session is idle, another caller takes its place: %v", err)
	} else {
		give()
	}
}

// TestBridgeEndTellsTheBackend: a round trip the caller abandoned before its response is
// cancelled with notifications/cancelled; one whose response was read is not.
func TestBridgeEndTellsTheBackend(t *testing.T) {
	ls := startLegacyServer(t)
	br, _ := newTestBridge(t, ls, false, 0)
	ctx := context.Background()
	x, err := br.Start(ctx, br.Gateway(), nil, &era.Request{Method: "tools/call", Params: json.RawMessage(`{}`)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	x.End(ctx, TimedOut)
	x.Release()
	seen := ls.seen()
	if seen[len(seen)-1] != era.NotifCancelled {
		t.Fatalf("an abandoned round trip ended with %v", seen)
	}
	call(t, ctx, br, br.Gateway(), nil)
	if seen := ls.seen(); seen[len(seen)-1] != "tools/call" {
		t.Fatalf("an answered round trip was cancelled: %v", seen)
	}
}

// TestBridgeHandshakeFailureIsRecorded: a handshake the backend refuses fails the request and
// is recorded once through Backend.Failed.
func TestBridgeHandshakeFailureIsRecorded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05","capabilities":{}}}`)
	}))
	t.Cleanup(srv.Close)
	be := &testBackend{url: srv.URL}
	br := New(be, Config{Offer: era.V20251125, ClientInfo: json.RawMessage(`{}`)})
	_, err := br.Start(context.Background(), br.Gateway(), nil, &era.Request{Method: "tools/list"}, nil, nil)
	if !errors.Is(err, wire.ErrBadResponse) || !strings.Contains(err.Error(), "unsupported version") {
		t.Fatalf("Start: %v", err)
	}
	if len(be.failed) != 1 || !strings.HasPrefix(be.failed[0], "initialize: ") {
		t.Fatalf("recorded %v", be.failed)
	}
}

// TestBridgeAsksOnlyWithinCalls: a request a backend sends on the response stream of the
// gateway's own requests (initialize, before the session is even initialized, and
// logging/setLevel, on a session shared by every caller of the backend) is refused there, as
// one to a 2026-07-28 client is, however the call that made the gateway send them could be
// asked: only the requests a backend sends while serving the call itself reach its client.
func TestBridgeAsksOnlyWithinCalls(t *testing.T) {
	ls := startLegacyServer(t)
	ls.askFirst = `{"jsonrpc":"2.0","id":"srv1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`
	br, _ := newTestBridge(t, ls, false, 0)
	var asked []string
	ctx := WithClientRequests(context.Background(), func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		asked = append(asked, method)
		return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}`), nil
	})
	x, err := br.Start(ctx, br.Gateway(), nil, &era.Request{Method: "tools/call", Params: json.RawMessage(`{"name":"echo"}`), Logs: true}, nil, nil)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer x.Release()
	if m, err := x.Next(ctx); err != nil || !m.IsResponse() {
		t.Fatalf("Next: %v, %v", m, err)
	}
	x.End(ctx, NotAbandoned)
	if len(asked) != 0 {
		t.Errorf("the client was asked %v", asked)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.replies) != 2 {
		t.Fatalf("the backend got %d replies, want 2: %v", len(ls.replies), ls.replies)
	}
	for _, r := range ls.replies {
		if !strings.Contains(r, `"id":"srv1"`) || !strings.Contains(r, `"error"`) {
			t.Errorf("reply %s, want an error for srv1", r)
		}
	}
}

// TestBridgeBoundsSessionIDs: a backend's session id of up to maxSessionIDBytes visible ASCII
// bytes opens a session; a longer one, which the gateway would keep and send with each request,
// is refused as the backend's fault with an error that says why, and no session is opened.
func TestBridgeBoundsSessionIDs(t *testing.T) {
	for _, tt := range []struct {
		name, id, refusal string
	}{
		{"at the bound", strings.Repeat("a", maxSessionIDBytes), ""},
		{"one over", strings.Repeat("a", maxSessionIDBytes+1), "session id of 1025 bytes"},
		{"far over", strings.Repeat("b", 512<<10), "session id of 524288 bytes"},
		{"not visible ASCII", "s id", "not visible ASCII"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var msg struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				_ = json.NewDecoder(r.Body).Decode(&msg)
				mu.Lock()
				seen = append(seen, msg.Method+" "+r.Header.Get("Mcp-Session-Id"))
				mu.Unlock()
				switch {
				case msg.Method == "initialize":
					w.Header().Set("Mcp-Session-Id", tt.id)
					w.Header().Set("Content-Type", "application/json")
					_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
				case msg.ID == nil:
					w.WriteHeader(http.StatusAccepted)
				default:
					w.Header().Set("Content-Type", "application/json")
					_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"tools":[]}}`)
				}
			}))
			t.Cleanup(srv.Close)
			be := &testBackend{url: srv.URL}
			br := New(be, Config{Offer: era.V20251125, ClientInfo: json.RawMessage(`{}`)})
			t.Cleanup(br.Close)
			x, err := br.Start(context.Background(), br.Gateway(), nil, &era.Request{Method: "tools/list"}, nil, nil)
			if tt.refusal == "" {
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				x.Release()
				mu.Lock()
				defer mu.Unlock()
				if last := seen[len(seen)-1]; last != "tools/list "+tt.id {
					t.Errorf("the request went with %.40q, want the session id", last)
				}
				return
			}
			if !errors.Is(err, wire.ErrBadResponse) || !strings.Contains(err.Error(), tt.refusal) {
				t.Fatalf("Start: %.200v, want a bad response saying %q", err, tt.refusal)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 1 {
				t.Errorf("the backend saw %d requests after a refused session id, want only initialize", len(seen))
			}
		})
	}
}

// TestBridgeGETStreamAsksPerWindow: a backend's GET stream, which lasts as long as its
// listeners, has its requests answered up to maxAsks a window (asksWindow), not maxAsks for
// good: a backend pinging now and then keeps its stream, one looping on ping loses it.
func TestBridgeGETStreamAsksPerWindow(t *testing.T) {
	ls := startLegacyServer(t)
	now := time.Unix(1000, 0)
	be := &testBackend{url: ls.URL}
	br := New(be, Config{Offer: era.V20251125, ClientInfo: json.RawMessage(`{"name":"mcp-gateway","version":"test"}`),
		Now: func() time.Time { return now }})
	t.Cleanup(br.Close)
	ctx := context.Background()
	sess, err := br.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	x := br.Events(sess, &http.Response{Body: io.NopCloser(strings.NewReader(""))}, nil)
	ping := &jsonrpc.Message{ID: json.RawMessage(`"p"`), Method: "ping"}
	for i := range maxAsks {
		if err := x.Answer(ctx, ping); err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
	}
	if err := x.Answer(ctx, ping); !errors.Is(err, wire.ErrBadResponse) {
		t.Fatalf("ping %d within the window: err = %v, want a bad response", maxAsks+1, err)
	}
	now = now.Add(asksWindow)
	if err := x.Answer(ctx, ping); err != nil {
		t.Fatalf("a ping in the next window: %v", err)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.replies) != maxAsks+1 {
		t.Errorf("%d pings answered, want %d", len(ls.replies), maxAsks+1)
	}
}
