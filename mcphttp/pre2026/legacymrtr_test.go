package pre2026

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

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

// askLog records the methods of the requests the edge wrote to its clients.
type askLog struct {
	mu      sync.Mutex
	methods []string
}

func (l *askLog) askedMethods() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.methods...)
}

// startAskingGateway is startLegacyGateway with a requestState codec, recording what the edge
// asks its clients.
func startAskingGateway(t *testing.T, c gwSpec, ups ...upstreams.UpstreamConfig) (*testGateway, *askLog) {
	t.Helper()
	c.Deps.MRTR = testMRTRCodec(t)
	g, e := startLegacyGateway(t, c, ups...)
	l := &askLog{}
	e.asks.observe = func(method string) {
		l.mu.Lock()
		l.methods = append(l.methods, method)
		l.mu.Unlock()
	}
	return g, l
}

// TestLegacyBackendElicitation: a backend's input_required reaches a pinned go-sdk client as a
// real elicitation/create request on the call's stream; its answer goes back to the backend with
// the backend's requestState, which the client never sees.
func TestLegacyBackendElicitation(t *testing.T) {
	for _, v := range legacyVersions {
		t.Run(v, func(t *testing.T) {
			be := mcptest.StartServer(t, "be")
			gw, asker := startAskingGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
			cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion(v),
				mcptest.WithElicitation(mcptest.Accept(map[string]any{"name": "Ada"})))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__ask_name", Arguments: map[string]any{}})
			if v == "2025-03-26" {
				// That revision has no elicitation: the call ends with a clear error, and
				// nothing is asked (the go-sdk declares elicitation all the same).
				if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "MCP 2025-03-26") {
					t.Fatalf("ask_name at 2025-03-26: %v %+v", err, res)
				}
				if got := asker.askedMethods(); len(got) != 0 {
					t.Fatalf("asked %v", got)
				}
				return
			}
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
	gw, asker := startAskingGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
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
	gw, asker := startAskingGateway(t, gwSpec{Server: mcphttp.Config{ConfirmDestructiveTools: true}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
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

// TestLegacyAskTimeout: a client that never answers gets a failed tool call naming the wait,
// on the stream the request went out on, which carries no SSE id.
func TestLegacyAskTimeout(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, asker := startAskingGateway(t, gwSpec{Edge: Config{AskTimeout: 300 * time.Millisecond}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{"elicitation":{}}`)
	r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid),
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"be__ask_name","arguments":{}}}`)
	body := string(r.Body)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") || r.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("%d %v %s", r.Status, r.Header, body)
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
			gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
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
	gw, _ := startAskingGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
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
	if r.Status != 202 {
		t.Fatalf("cancel: %d", r.Status)
	}
	if err := be.WaitSlow(ctx, func(s mcptest.SlowStats) bool { return s.Cancelled == 1 }); err != nil {
		t.Fatalf("the backend call was not cancelled: %v", err)
	}
	select {
	case r := <-done:
		if r.Status != 200 || !strings.Contains(string(r.Body), "Request cancelled by the client") {
			t.Fatalf("the cancelled call ended with %d %s", r.Status, r.Body)
		}
	case <-ctx.Done():
		t.Fatal("the cancelled call's response did not end")
	}
}

// TestLegacyKeepAlive: a quiet call's keep-alive comments reach the legacy client, which then gets
// its result as the stream's last event; no event carries an id.
func TestLegacyKeepAlive(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{Server: mcphttp.Config{SSEKeepAlive: 40 * time.Millisecond}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-06-18", `{}`)
	r := do(t, "POST", gw.URL, legacyHeaders("2025-06-18", sid),
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"be__slow","arguments":{"ms":400}}}`)
	body := string(r.Body)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") ||
		!strings.Contains(body, ": keep-alive") || !strings.Contains(body, `"id":3,"result"`) {
		t.Fatalf("%d %v %s", r.Status, r.Header, body)
	}
	if strings.Contains(body, "\nid:") || strings.Contains(body, "resultType") {
		t.Fatalf("the stream carries an SSE id or a 2026 member: %s", body)
	}
}

// TestLegacySessionlessNotCancelled: session-less requests share no key, so a session-less
// notifications/cancelled (anyone's) cancels nothing.
func TestLegacySessionlessNotCancelled(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startAskingGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
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
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s-1"}}`); r.Status != 202 {
		t.Fatalf("cancel: %d", r.Status)
	}
	r := <-done
	if r.Status != 200 || r.RPC.Error != nil || be.SlowStats().Cancelled != 0 {
		t.Fatalf("the call was cancelled by a session-less notification: %d %s", r.Status, r.Body)
	}
}
