package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// rawLegacy is a 2025-11-25 backend written with net/http for behaviours the SDKs do not
// produce on demand. Its tools:
//
//	ping_mid  sends a ping request on the response stream and answers once the ping reply arrived
//	resume    sends a priming event with an id and retry, closes the stream, and answers on the
//	          GET that resumes after that id (SEP-1699)
//	elicit    sends elicitation/create and answers with the error code the gateway replied with
//	elicit_many sends 50 elicitation/create requests, then answers without awaiting any reply
//	ping_loop sends ping after ping (1000) on its stream without awaiting replies, then waits
//	twice     answers on its stream, then answers again with other content
//	both_sse  answers on its stream with a result and an error
//	sid_change answers in JSON with another Mcp-Session-Id header than its session's
//	expire    the first call kills its session: it and every later request on it get 404
//	other_id  answers in JSON under another id
//	both      answers in JSON with a result and an error
//	null_error on its stream, answers another id, then errs with a null id
//	typed     on its stream, sends events of other types than message (typedEvents), then answers
//	progress_tokens on its stream, sends progress under the tokens 42, 43 and "42", then answers
type rawLegacy struct {
	srv      *httptest.Server
	mu       sync.Mutex
	sessions int
	killed   map[string]bool
	resumeID json.RawMessage      // id of the call the resume tool left open
	log      []string             // "METHOD jsonrpc-method session" per request
	replies  chan json.RawMessage // JSON-RPC responses POSTed by the gateway
	resumed  chan string          // Last-Event-ID of resuming GETs
}

func startRawLegacy(t *testing.T) *rawLegacy {
	t.Helper()
	b := &rawLegacy{killed: map[string]bool{}, replies: make(chan json.RawMessage, 8), resumed: make(chan string, 8)}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(func() {
		b.srv.CloseClientConnections()
		b.srv.Close()
	})
	return b
}

func (b *rawLegacy) URL() string { return b.srv.URL + "/mcp" }

func (b *rawLegacy) record(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.log = append(b.log, s)
}

func (b *rawLegacy) requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.log...)
}

type rawMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (b *rawLegacy) serve(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method == http.MethodGet {
		b.record("GET " + sid + " " + r.Header.Get("Last-Event-ID"))
		select {
		case b.resumed <- r.Header.Get("Last-Event-ID"):
		default: // never block the backend: a full channel means the test has what it needs
		}
		b.mu.Lock()
		id := b.resumeID
		b.mu.Unlock()
		legacyEvent(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"resumed"}]}}`)
		return
	}
	if r.Method == http.MethodDelete {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m rawMsg
	_ = json.Unmarshal(body, &m)
	switch {
	case m.Method == "" && (m.Result != nil || m.Error != nil):
		b.record("POST response " + sid)
		select {
		case b.replies <- body:
		default: // never block the backend: replies past the buffer are not awaited
		}
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "server/discover":
		http.Error(w, "Bad Request: no session", http.StatusBadRequest) // a plain legacy 400
	case m.Method == "initialize":
		b.mu.Lock()
		b.sessions++
		n := b.sessions
		b.mu.Unlock()
		b.record("POST initialize")
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s%d", n))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{}}},"serverInfo":{"name":"raw","version":"1"}}}`, m.ID)
	case m.Method == "notifications/initialized" || m.Method == "notifications/cancelled":
		b.record("POST " + m.Method + " " + sid)
		w.WriteHeader(http.StatusAccepted)
	default:
		b.record("POST " + m.Method + " " + sid + " " + m.Params.Name)
		b.tool(w, r, sid, &m)
	}
}

func (b *rawLegacy) tool(w http.ResponseWriter, r *http.Request, sid string, m *rawMsg) {
	b.mu.Lock()
	if m.Params.Name == "expire" && len(b.killed) == 0 {
		b.killed[sid] = true
	}
	dead := b.killed[sid]
	b.mu.Unlock()
	if dead {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	switch m.Params.Name {
	case "expire":
		legacyEvent(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"fresh"}]}}`)
	case "ping_mid":
		legacyEvent(w, `{"jsonrpc":"2.0","id":"srv-ping","method":"ping"}`)
		reply := b.awaitReply(r.Context())
		legacyEvent(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":`+quoteJSON(string(reply))+`}]}}`)
	case "elicit":
		legacyEvent(w, `{"jsonrpc":"2.0","id":"srv-e","method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object"}}}`)
		reply := b.awaitReply(r.Context())
		legacyEvent(w, `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e"}}`)
		legacyEvent(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"isError":true,"content":[{"type":"text","text":`+quoteJSON(string(reply))+`}]}}`)
	case "elicit_many":
		for i := range 50 {
			legacyEvent(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":"srv-%d","method":"elicitation/create","params":{"message":"again?","requestedSchema":{"type":"object"}}}`, i))
		}
		legacyEvent(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[]}}`)
	case "ping_loop":
		for i := range 1000 {
			legacyEvent(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":"srv-%d","method":"ping"}`, i))
		}
		<-r.Context().Done()
	case "twice":
		legacyEvent(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"first"}]}}`)
		legacyEvent(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"second"}]}}`)
	case "both_sse":
		legacyEvent(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[]},"error":{"code":1,"message":"x"}}`)
	case "sid_change":
		w.Header().Set("Mcp-Session-Id", "evil")
		upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[]}}`)
	case "resume":
		b.mu.Lock()
		b.resumeID = m.ID
		b.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: ev-1\nretry: 10\ndata: \n\n")
	case "other_id":
		upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":"not-`+strings.Trim(string(m.ID), `"`)+`","result":{"content":[]}}`)
	case "null_error":
		legacyEvent(w, `{"jsonrpc":"2.0","id":"other","result":{"content":[]}}`)
		legacyEvent(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unreadable request"}}`)
	case "progress_tokens":
		for _, tok := range []string{`42`, `43`, `"42"`} {
			legacyEvent(w, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+tok+`,"progress":1}}`)
		}
		legacyEvent(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[]}}`)
	case "typed":
		w.Header().Set("Content-Type", "text/event-stream")
		typedEvents(w, m.ID)
		legacyEvent(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"message event"}]}}`)
	case "both":
		upstreamstest.WriteJSON(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[]},"error":{"code":1,"message":"x"}}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unknown tool"}}`, m.ID)
	}
}

func (b *rawLegacy) awaitReply(ctx context.Context) json.RawMessage {
	select {
	case r := <-b.replies:
		return r
	case <-ctx.Done():
		return nil
	case <-time.After(30 * time.Second):
		return json.RawMessage(`"no reply"`)
	}
}

func legacyEvent(w http.ResponseWriter, data string) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", data)
	w.(http.Flusher).Flush()
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestLegacyRawBackend(t *testing.T) {
	raw := startRawLegacy(t)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "raw", URL: raw.URL()}}}, Options{})
	call := func(t *testing.T, tool string) map[string]any {
		return callOnce(t, r, MethodToolsCall, "raw__"+tool, KindTool, `{"_meta":`+upstreamstest.Meta+`,"name":"raw__`+tool+`"}`)
	}
	t.Run("ping mid-stream is answered with the session", func(t *testing.T) {
		res := call(t, "ping_mid")
		reply, _ := mcptest.Path(res, "result", "content", 0, "text").(string)
		if reply != `{"jsonrpc":"2.0","id":"srv-ping","result":{}}` {
			t.Fatalf("backend got ping reply %q", reply)
		}
		if log := raw.requests(); !strings.HasPrefix(log[len(log)-1], "POST response s") {
			t.Fatalf("reply not posted on the session: %v", log)
		}
	})
	t.Run("elicitation is refused and its completion dropped", func(t *testing.T) {
		s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`3`),
			Target: Target{Upstream: "raw", Name: "elicit"}, Params: json.RawMessage(`{"name":"raw__elicit"}`)})
		if err != nil {
			t.Fatal(err)
		}
		msgs := collect(t, s)
		if len(msgs) != 1 {
			t.Fatalf("got %v, want only the final response", msgs)
		}
		m := decodeObject(t, msgs[0])
		reply, _ := mcptest.Path(m, "result", "content", 0, "text").(string)
		if !strings.Contains(reply, `"code":-32601`) || !strings.Contains(reply, "not supported through the gateway") {
			t.Fatalf("backend got elicitation reply %q", reply)
		}
	})
	// With a client that can be asked (WithClientRequests), the backend's request reaches it as
	// it came, and the client's result, or its JSON-RPC error, goes back to the backend.
	relayed := func(t *testing.T, f ClientRequests) string {
		t.Helper()
		ctx := WithClientRequests(context.Background(), f)
		s, err := r.Call(ctx, &Call{Method: MethodToolsCall, ID: json.RawMessage(`4`),
			Target: Target{Upstream: "raw", Name: "elicit"}, Params: json.RawMessage(`{"name":"raw__elicit"}`)})
		if err != nil {
			t.Fatal(err)
		}
		msgs := collect(t, s)
		reply, _ := mcptest.Path(decodeObject(t, msgs[len(msgs)-1]), "result", "content", 0, "text").(string)
		return reply
	}
	t.Run("elicitation is relayed to a client that can be asked", func(t *testing.T) {
		var asked string
		reply := relayed(t, func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			asked = method + " " + string(params)
			return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
		})
		if asked != `elicitation/create {"message":"name?","requestedSchema":{"type":"object"}}` {
			t.Errorf("the client was asked %q", asked)
		}
		if reply != `{"jsonrpc":"2.0","id":"srv-e","result":{"action":"accept","content":{"name":"Ada"}}}` {
			t.Errorf("backend got %q", reply)
		}
	})
	t.Run("a client's error reaches the backend", func(t *testing.T) {
		reply := relayed(t, func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "no elicitation here")
		})
		if reply != `{"jsonrpc":"2.0","id":"srv-e","error":{"code":-32601,"message":"no elicitation here"}}` {
			t.Errorf("backend got %q", reply)
		}
	})
	t.Run("early close is resumed with Last-Event-ID", func(t *testing.T) {
		res := call(t, "resume")
		if got := mcptest.Path(res, "result", "content", 0, "text"); got != "resumed" {
			t.Fatalf("response %v", res)
		}
		if id := <-raw.resumed; id != "ev-1" {
			t.Fatalf("resumed after %q, want ev-1", id)
		}
		if log := raw.requests(); !strings.HasPrefix(log[len(log)-1], "GET s") {
			t.Fatalf("resume GET without a session: %v", log)
		}
	})
	t.Run("404 re-initializes and retries once", func(t *testing.T) {
		before := len(raw.requests())
		res := call(t, "expire")
		if got := mcptest.Path(res, "result", "content", 0, "text"); got != "fresh" {
			t.Fatalf("response %v", res)
		}
		got := raw.requests()[before:]
		if len(got) != 4 || got[1] != "POST initialize" || !strings.HasPrefix(got[3], "POST tools/call s") {
			t.Fatalf("backend saw %v, want call, initialize, initialized, call", got)
		}
	})
	t.Run("discover comes from initialize without core tasks", func(t *testing.T) {
		d, err := r.Capabilities(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(d.Capabilities) != `{"tools":{}}` {
			t.Fatalf("capabilities %s", d.Capabilities)
		}
	})
}

// TestLegacyRawAnswerNotOurs: a pre-2026 backend's JSON answer that does not carry the id the
// gateway sent on the shared session, or that is a result and an error at once, is a bad
// response, never relayed as the caller's answer.
func TestLegacyRawAnswerNotOurs(t *testing.T) {
	raw := startRawLegacy(t)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "raw", URL: raw.URL()}}}, Options{})
	for _, tool := range []string{"other_id", "both"} {
		_, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`5`),
			Target: Target{Upstream: "raw", Name: tool}, Params: json.RawMessage(`{"name":"raw__` + tool + `"}`)})
		if !errors.Is(err, ErrBadResponse) {
			t.Errorf("%s: err = %v, want ErrBadResponse", tool, err)
		}
	}
	// On the call's stream the answer to another id is skipped, and an error with a null id
	// (JSON-RPC's for a request whose id could not be read) is this request's answer: the call
	// ends with it rather than waiting out its timeout.
	s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`6`),
		Target: Target{Upstream: "raw", Name: "null_error"}, Params: json.RawMessage(`{"name":"raw__null_error"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if msgs := collect(t, s); len(msgs) != 1 || !strings.Contains(msgs[0], `"id":6,"error":{"code":-32600`) {
		t.Fatalf("null-id error on the stream: %v", msgs)
	}
}

// TestLegacyAsksDoNotFloodTheLog: a pre-2026 backend that sends request after request mid-call
// (here 50 elicitations a client cannot be asked) has each refused, and the call answered, but
// makes a few log lines of it, not one a request: a backend may send thousands in one call.
func TestLegacyAsksDoNotFloodTheLog(t *testing.T) {
	raw := startRawLegacy(t)
	var logs mcptest.LogBuffer
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "raw", URL: raw.URL()}}},
		Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	res := callOnce(t, r, MethodToolsCall, "raw__elicit_many", KindTool, `{"_meta":`+upstreamstest.Meta+`,"name":"raw__elicit_many"}`)
	if mcptest.Path(res, "result") == nil {
		t.Fatalf("the call was not answered: %v", res)
	}
	refusals := 0
	for _, r := range raw.requests() {
		if strings.HasPrefix(r, "POST response ") {
			refusals++
		}
	}
	lines := strings.Count(logs.String(), "legacy upstream request refused")
	if refusals != 50 || lines == 0 || lines > 4 {
		t.Errorf("%d of 50 requests refused, %d log lines: want every one refused and a few lines", refusals, lines)
	}
}

// TestLegacyAsksBoundedPerCall: a pre-2026 backend that loops on ping mid-call does not have the
// gateway send a POST per ping: past maxAsks the call ends with an error that says why, the
// requests beyond it are not answered, and the backend is told the call is cancelled.
func TestLegacyAsksBoundedPerCall(t *testing.T) {
	raw := startRawLegacy(t)
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "raw", URL: raw.URL()}}}, Options{})
	// The backend never answers: without the bound the call would end only at this deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := r.Call(ctx, &Call{Method: MethodToolsCall, ID: json.RawMessage(`7`),
		Target: Target{Upstream: "raw", Name: "ping_loop"}, Params: json.RawMessage(`{"name":"raw__ping_loop"}`)})
	if err == nil {
		_, _, err = s.Next()
		s.Close()
	}
	var rpc *jsonrpc.Error
	if !errors.Is(err, ErrBadResponse) || !errors.As(err, &rpc) || !strings.Contains(rpc.Message, "more than 100 requests") {
		t.Fatalf("err = %v, want a bad response saying the backend sent more than 100 requests", err)
	}
	answers, cancelled := 0, false
	for _, r := range raw.requests() {
		answers += bool2int(strings.HasPrefix(r, "POST response "))
		cancelled = cancelled || strings.HasPrefix(r, "POST notifications/cancelled ")
	}
	if answers != 100 || !cancelled {
		t.Errorf("%d pings answered (want 100), cancelled %v (want true): %v", answers, cancelled, raw.requests())
	}
}

func bool2int(b bool) int {
	if b {
		return 1
	}
	return 0
}
