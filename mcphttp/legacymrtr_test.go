package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// testAsker is a single-replica legacyAsker for the edge's tests: requests go out through emit
// with ids of its own, answers come back through deliver on the same process. The bridge between
// replicas is tested on its own; these tests hold the edge's MRTR loop to its contract.
type testAsker struct {
	mu      sync.Mutex
	n       int
	waiting map[string]chan *jsonrpc.Message
	running map[string]context.CancelFunc
	asked   []era.InputRequest
}

func newTestAsker() *testAsker {
	return &testAsker{waiting: map[string]chan *jsonrpc.Message{}, running: map[string]context.CancelFunc{}}
}

func (a *testAsker) ask(ctx context.Context, sess *legacysession.Session, reqs []era.InputRequest, emit func([]byte) error) (json.RawMessage, error) {
	type pending struct {
		req era.InputRequest
		ch  chan *jsonrpc.Message
	}
	for _, q := range reqs {
		if !era.Declares(sess.Caps, q.Capability) {
			return nil, errors.New("test asker: capability not declared")
		}
	}
	var ps []pending
	for _, q := range reqs {
		a.mu.Lock()
		a.n++
		id := fmt.Sprintf("t%d", a.n)
		ch := make(chan *jsonrpc.Message, 1)
		a.waiting[id] = ch
		a.asked = append(a.asked, q)
		a.mu.Unlock()
		msg := `{"jsonrpc":"2.0","id":"` + id + `","method":"` + q.Method + `","params":` + string(q.Params) + `}`
		if err := emit([]byte(msg)); err != nil {
			return nil, err
		}
		ps = append(ps, pending{q, ch})
	}
	out := map[string]json.RawMessage{}
	for _, p := range ps {
		select {
		case m := <-p.ch:
			if m.Error != nil {
				return nil, m.Error
			}
			v, err := era.InputResponse(p.req, m.Result)
			if err != nil {
				return nil, err
			}
			out[p.req.Key] = v
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return json.Marshal(out)
}

func (a *testAsker) deliver(_ context.Context, _ *legacysession.Session, msg *jsonrpc.Message) error {
	var id string
	if json.Unmarshal(msg.ID, &id) != nil {
		return errors.New("test asker: unknown id")
	}
	a.mu.Lock()
	ch, ok := a.waiting[id]
	delete(a.waiting, id)
	a.mu.Unlock()
	if !ok {
		return errors.New("test asker: unknown id")
	}
	ch <- msg
	return nil
}

func (a *testAsker) track(sess *legacysession.Session, id json.RawMessage, cancel context.CancelFunc) func() {
	k := sess.Key() + "/" + string(id)
	a.mu.Lock()
	a.running[k] = cancel
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		delete(a.running, k)
		a.mu.Unlock()
	}
}

func (a *testAsker) cancel(_ context.Context, sess *legacysession.Session, id json.RawMessage) {
	a.mu.Lock()
	c := a.running[sess.Key()+"/"+string(id)]
	a.mu.Unlock()
	if c != nil {
		c()
	}
}

func (a *testAsker) askedMethods() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, q := range a.asked {
		out = append(out, q.Method)
	}
	return out
}

// testMRTRCodec is the requestState codec cmd/gateway always configures.
func testMRTRCodec(t *testing.T) *mrtr.Codec {
	t.Helper()
	replays, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := mrtr.New(testStateSealer(t), mrtr.Config{}, replays, nil)
	if err != nil {
		t.Fatal(err)
	}
	return codec
}

// startBridgedGateway is startLegacyGateway with a requestState codec and a test asker.
func startBridgedGateway(t *testing.T, cfg Config, ups ...upstreams.UpstreamConfig) (*testGateway, *testAsker) {
	t.Helper()
	gw, s := startLegacyGateway(t, cfg, Deps{MRTR: testMRTRCodec(t)}, ups...)
	a := newTestAsker()
	s.legacy.asker = a
	return gw, a
}

// TestLegacyBackendElicitation: a backend's input_required reaches a pinned go-sdk client as a
// real elicitation/create request on the call's stream; its answer goes back to the backend with
// the backend's requestState, which the client never sees.
func TestLegacyBackendElicitation(t *testing.T) {
	for _, v := range legacyVersions {
		t.Run(v, func(t *testing.T) {
			be := mcptest.StartServer(t, "be")
			gw, asker := startBridgedGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
			cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion(v),
				mcptest.WithElicitation(mcptest.Accept(map[string]any{"name": "Ada"})))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__ask_name", Arguments: map[string]any{}})
			if err != nil || res.IsError || mcptest.ResultText(res) != "Hello, Ada" {
				t.Fatalf("ask_name: %v %+v", err, res)
			}
			if got := asker.askedMethods(); len(got) != 1 || got[0] != "elicitation/create" {
				t.Fatalf("asked %v", got)
			}
			calls := be.RequestsOf("tools/call")
			if len(calls) != 2 || !strings.Contains(string(calls[1].Body), mcptest.AskNameState) {
				t.Fatalf("backend calls %d; the retry must carry the backend's state", len(calls))
			}
		})
	}
}

// TestLegacyNoCapability: a call that needs elicitation from a client that did not declare it
// ends as a failed tool call saying so, and nothing is asked.
func TestLegacyNoCapability(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, asker := startBridgedGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"))
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__ask_name", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "requires elicitation, which this client did not declare") {
		t.Fatalf("ask_name: %v %+v", err, res)
	}
	if len(asker.askedMethods()) != 0 {
		t.Fatal("the client was asked")
	}
}

// destructiveTool is a tool that annotates itself destructive and counts its runs.
func destructiveTool(runs *atomic.Int32) mcptest.Option {
	yes := true
	tool := &mcp.Tool{Name: "wipe", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}}
	return mcptest.WithTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		runs.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wiped"}}}, nil
	})
}

// TestLegacyConfirmation: the gateway's own confirmation reaches a legacy client as an
// elicitation; approved, the call runs once; declined, it never reaches the backend; a client
// without elicitation gets the capability error and the call is not forwarded.
func TestLegacyConfirmation(t *testing.T) {
	var runs atomic.Int32
	be := mcptest.StartServer(t, "be", destructiveTool(&runs))
	gw, asker := startBridgedGateway(t, Config{ConfirmDestructiveTools: true}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	call := &mcp.CallToolParams{Name: "be__wipe", Arguments: map[string]any{}}

	approve := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(mcptest.Accept(map[string]any{"approve": true})))
	res, err := approve.CallTool(t.Context(), call)
	if err != nil || res.IsError || mcptest.ResultText(res) != "wiped" || runs.Load() != 1 {
		t.Fatalf("approved: %v %+v, runs %d", err, res, runs.Load())
	}
	if got := asker.askedMethods(); len(got) != 1 || got[0] != "elicitation/create" {
		t.Fatalf("asked %v", got)
	}

	decline := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-06-18"), mcptest.WithElicitation(mcptest.Decline()))
	res, err = decline.CallTool(t.Context(), call)
	if err != nil || !res.IsError || runs.Load() != 1 {
		t.Fatalf("declined: %v %+v, runs %d", err, res, runs.Load())
	}

	none := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"))
	res, err = none.CallTool(t.Context(), call)
	if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "which this client did not declare") || runs.Load() != 1 {
		t.Fatalf("undeclared: %v %+v, runs %d", err, res, runs.Load())
	}
}

// TestLegacyBridgeTimeout: a client that never answers gets a failed tool call naming the wait,
// on the stream the request went out on, which carries no SSE id.
func TestLegacyBridgeTimeout(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, asker := startBridgedGateway(t, Config{Legacy: LegacyConfig{BridgeTimeout: 300 * time.Millisecond}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{"elicitation":{}}`)
	r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid),
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"be__ask_name","arguments":{}}}`)
	body := string(r.body)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") || r.header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("%d %v %s", r.status, r.header, body)
	}
	if !strings.Contains(body, `"method":"elicitation/create"`) || !strings.Contains(body, "no answer from the client within 300ms") ||
		!strings.Contains(body, `"isError":true`) {
		t.Fatalf("stream %s", body)
	}
	if strings.Contains(body, "\nid:") || strings.HasPrefix(body, "id:") || strings.Contains(body, "requestState") ||
		strings.Contains(body, "input_required") {
		t.Fatalf("the stream leaks an event id or MRTR state: %s", body)
	}
	if len(asker.askedMethods()) != 1 {
		t.Fatal("not asked once")
	}
}

// TestLegacyProgressOverSSE: a pinned go-sdk client gets a backend's progress on the call's
// stream before its result.
func TestLegacyProgressOverSSE(t *testing.T) {
	for _, v := range legacyVersions {
		t.Run(v, func(t *testing.T) {
			be := mcptest.StartServer(t, "be")
			gw, _ := startLegacyGateway(t, Config{}, Deps{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
			progressed := make(chan float64, 8)
			cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion(v), mcptest.WithProgress(
				func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { progressed <- req.Params.Progress }))
			p := &mcp.CallToolParams{Name: "be__progress", Arguments: map[string]any{"steps": 3}}
			p.SetProgressToken("tok")
			res, err := cs.CallTool(t.Context(), p)
			if err != nil || res.IsError || mcptest.ResultText(res) != "done 3" {
				t.Fatalf("progress: %v %+v", err, res)
			}
			for i := range 3 {
				select {
				case got := <-progressed:
					if got != float64(i+1) {
						t.Fatalf("progress %v, want %d", got, i+1)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("progress %d did not arrive", i+1)
				}
			}
		})
	}
}

// TestLegacyCancelled: notifications/cancelled from the client cancels the call it names, and
// the backend's call with it.
func TestLegacyCancelled(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startBridgedGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	done := make(chan *response, 1)
	go func() {
		done <- do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid),
			`{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"be__slow","arguments":{"ms":20000}}}`)
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := be.WaitSlow(ctx, func(s mcptest.SlowStats) bool { return s.Started == 1 }); err != nil {
		t.Fatal(err)
	}
	r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid),
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1"}}`)
	if r.status != 202 {
		t.Fatalf("cancel: %d", r.status)
	}
	if err := be.WaitSlow(ctx, func(s mcptest.SlowStats) bool { return s.Cancelled == 1 }); err != nil {
		t.Fatalf("the backend call was not cancelled: %v", err)
	}
	select {
	case r := <-done:
		if r.status != 200 || !strings.Contains(string(r.body), "Request cancelled by the client") {
			t.Fatalf("the cancelled call ended with %d %s", r.status, r.body)
		}
	case <-ctx.Done():
		t.Fatal("the cancelled call's response did not end")
	}
}

// TestLegacyKeepAlive: a quiet call's keep-alive comments reach the legacy client, which then gets
// its result as the stream's last event; no event carries an id.
func TestLegacyKeepAlive(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, Config{SSEKeepAlive: 40 * time.Millisecond}, Deps{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-06-18", `{}`)
	r := do(t, "POST", gw.URL, legacyHeaders("2025-06-18", sid),
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"be__slow","arguments":{"ms":400}}}`)
	body := string(r.body)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") ||
		!strings.Contains(body, ": keep-alive") || !strings.Contains(body, `"id":3,"result"`) {
		t.Fatalf("%d %v %s", r.status, r.header, body)
	}
	if strings.Contains(body, "\nid:") || strings.Contains(body, "resultType") {
		t.Fatalf("the stream carries an SSE id or a 2026 member: %s", body)
	}
}

// TestLegacySessionlessNotCancelled: session-less requests share no key, so a session-less
// notifications/cancelled (anyone's) cancels nothing.
func TestLegacySessionlessNotCancelled(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startBridgedGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	done := make(chan *response, 1)
	go func() {
		done <- do(t, "POST", gw.URL, legacyHeaders("2025-11-25", ""),
			`{"jsonrpc":"2.0","id":"s-1","method":"tools/call","params":{"name":"be__slow","arguments":{"ms":300}}}`)
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := be.WaitSlow(ctx, func(s mcptest.SlowStats) bool { return s.Started == 1 }); err != nil {
		t.Fatal(err)
	}
	if r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", ""),
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s-1"}}`); r.status != 202 {
		t.Fatalf("cancel: %d", r.status)
	}
	r := <-done
	if r.status != 200 || r.rpc.Error != nil || be.SlowStats().Cancelled != 0 {
		t.Fatalf("the call was cancelled by a session-less notification: %d %s", r.status, r.body)
	}
}
