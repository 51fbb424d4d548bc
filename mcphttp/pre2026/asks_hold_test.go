package pre2026

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// askThreeState is the requestState of the askThree tool's round.
const askThreeState = "ask_three/v1"

// askThreeTool asks three form elicitations in one input round and, once answered, says how
// many answer bytes its retry carried.
func askThreeTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params.RequestState == askThreeState && len(req.Params.InputResponses) == 3 {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil
	}
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"note": {Type: "string"}}}
	ir := mcp.InputRequestMap{}
	for _, k := range []string{"a", "b", "c"} {
		ir[k] = &mcp.ElicitParams{Mode: "form", Message: "Note " + k + "?", RequestedSchema: schema}
	}
	return &mcp.CallToolResult{InputRequests: ir, RequestState: askThreeState}, nil
}

// TestLegacyRoundAnswersBounded: a pre-2026 client's answers to one round arrive in separate
// POSTs, each within server.maxBodyBytes, and the edge holds them until the round is complete
// and then sends them on in one request: together they are held to what one request may carry
// (server.maxBodyBytes), as a 2026-07-28 client's inputResponses are, by being in one body. A
// round whose answers go beyond it ends the call with an error, and nothing more reaches the
// backend; answers within it go through.
func TestLegacyRoundAnswersBounded(t *testing.T) {
	const maxBody = 64 << 10
	be := mcptest.StartServer(t, "be", mcptest.WithTool(&mcp.Tool{Name: "ask_three",
		InputSchema: &jsonschema.Schema{Type: "object"}}, askThreeTool))
	gw, _ := startAskingGateway(t, gwSpec{Server: mcphttp.Config{MaxBodyBytes: maxBody}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	for _, tt := range []struct {
		name   string
		note   int // bytes of each of the three answers' note
		wantOK bool
	}{
		{"within", maxBody / 8, true},
		{"beyond", maxBody / 2, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			be.Reset()
			note := strings.Repeat("x", tt.note)
			cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
				// A map of its own per answer: the SDK validates each answer's content while
				// the others are answered.
				mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"note": note}}, nil
				}))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__ask_three", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			calls := len(be.RequestsOf("tools/call"))
			text := mcptest.ResultText(res)
			if tt.wantOK {
				if res.IsError || text != "answered" || calls != 2 {
					t.Fatalf("result %q (error %v), %d backend calls; want the answers through", text, res.IsError, calls)
				}
				return
			}
			want := fmt.Sprintf("answers to this round exceed %d bytes", maxBody)
			if !res.IsError || !strings.Contains(text, want) || calls != 1 {
				t.Fatalf("result %q (error %v), %d backend calls; want %q and nothing more forwarded", text, res.IsError, calls, want)
			}
		})
	}
}

// TestAsksWaitHoldsNoRequests: once a round's requests are written, what waits for the answers
// keeps none of them: a backend's input_required may carry requests of up to its response
// limit (16 MiB by default), and a round waits up to legacy.askTimeout, outside the budget of
// results in flight, which the request gave back when it was written. The answer is still
// checked against its request's method and capability.
func TestAsksWaitHoldsNoRequests(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{}, nil, nil)
	sess := testSession(1, "p1", allCaps)
	big := elicitReq
	big.Params = json.RawMessage(`{"mode":"form","message":"` + strings.Repeat("m", 1<<20) +
		`","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)
	p := startAsk(t, rig.b, sess, big, samplingReq)
	ids := p.ids(t, 2)
	rig.b.mu.Lock()
	for _, w := range rig.b.waiters {
		if len(w.req.Params) != 0 {
			t.Errorf("a waiter for %s holds its request's %d bytes of params", w.req.Method, len(w.req.Params))
		}
	}
	rig.b.mu.Unlock()
	for _, a := range []*jsonrpc.Message{answer(ids[0], acceptName), answer(ids[1], samplingRes)} {
		if err := rig.b.deliver(context.Background(), sess, testCaller, a); err != nil {
			t.Fatalf("answer: %v", err)
		}
	}
	if r := p.result(t); r.err != nil || !strings.Contains(string(r.out), `"name"`) {
		t.Fatalf("ask = %s, %v", r.out, r.err)
	}
}

// TestAsksEndWithTheSession: a round never waits past its session's expiry. From then on the
// client's answer is refused with 404 (the session is gone) and it initializes again, so a
// round that waited on would hold its call, and the caller's in-flight slot, until
// legacy.askTimeout for an answer that cannot come. It ends at the expiry, saying why.
func TestAsksEndWithTheSession(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{Timeout: time.Hour}, nil, nil)
	sess := testSession(1, "p1", allCaps)
	sess.Expires = time.Now().Add(100 * time.Millisecond)
	p := startAsk(t, rig.b, sess, elicitReq)
	p.ids(t, 1)
	if r := p.result(t); !errors.Is(r.err, errSessionExpired) {
		t.Fatalf("ask = %v, want errSessionExpired", r.err)
	}
	rig.assertIdle(t)
}

// TestLegacyHeldAnswersCounted: the answers a round holds while it waits for the rest count
// against the replica's budget of request bytes in flight (server.maxBodyBytesInFlight) until
// the request that carries them on has ended. Each answer's POST gives back what its body held
// once it is answered 202; the round keeps the answer for up to legacy.askTimeout. Before, those
// bytes were charged to nothing, so the rounds of every caller together could hold any number of
// server.maxBodyBytes worth of answers. A pinned 2025-11-25 go-sdk client answers the first of
// three elicitations with a 20 KiB note and holds the other two: the budget shows the note held,
// then nothing once the call is answered.
func TestLegacyHeldAnswersCounted(t *testing.T) {
	const note = 20 << 10
	be := mcptest.StartServer(t, "be", mcptest.WithTool(&mcp.Tool{Name: "ask_three",
		InputSchema: &jsonschema.Schema{Type: "object"}}, askThreeTool))
	gw, _ := startAskingGateway(t, gwSpec{Server: mcphttp.Config{MaxBodyBytes: 64 << 10}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	hold := make(chan struct{})
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Message != "Note a?" {
				select {
				case <-hold:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"note": strings.Repeat("x", note)}}, nil
		}))
	// Let go before the client closes, so that a failing test ends rather than waits on its
	// handlers (cleanups run last registered first).
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := callAskThree(ctx, cs)
	mcptest.WaitFor(t, "the round's first answer counted against the body budget", func() bool {
		return gw.mcp.BodyBytesInFlight() >= note
	})
	release()
	awaitCall(t, done)
	mcptest.WaitFor(t, "the answers given back", func() bool { return gw.mcp.BodyBytesInFlight() == 0 })
}

// callAskThree calls be__ask_three on cs in the background; the channel then gets nil when it
// answered "answered", else what went wrong.
func callAskThree(ctx context.Context, cs *mcp.ClientSession) <-chan error {
	done := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__ask_three", Arguments: map[string]any{}})
		if err == nil && (res.IsError || mcptest.ResultText(res) != "answered") {
			err = fmt.Errorf("result %q (error %v)", mcptest.ResultText(res), res.IsError)
		}
		done <- err
	}()
	return done
}

// awaitCall fails t unless the call of done (callAskThree) ends well.
func awaitCall(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(asksHang): // fail-safe
		t.Fatal("the call did not end")
	}
}

// bodyBudget is a bodyread.Budget as the asks are charged to it (mcphttp.Incoming's methods).
type bodyBudget struct{ *bodyread.Budget }

func (b bodyBudget) TakeBodyBytes(n int64) bool { return b.Take(n) }
func (b bodyBudget) ReturnBodyBytes(n int64)    { b.Return(n) }

// TestAsksHeldAnswersShare: the answers the rounds of one caller hold are bounded together
// (roundLimits.CallerBytes), whatever the session: a round whose answer would pass the
// caller's share ends with *callerAnswersError, while another caller's round holds the same
// answer. An answer the replica's budget cannot take ends its round with errAnswersBudget.
// Everything held is charged to the budget and given back: by a round that fails at once, by
// one that succeeds once the request that carries its answers has ended (release).
func TestAsksHeldAnswersShare(t *testing.T) {
	const bob = "https://idp.test#bob"
	big := `{"action":"accept","content":{"name":"` + strings.Repeat("n", 600) + `"}}`
	rig := newAsksRig(t, asksTestRing(t), asksConfig{}, nil, nil)
	budget := bodyBudget{bodyread.NewBudget(4000)}
	lim := roundLimits{MaxBytes: 10000, CallerBytes: 1000, Budget: budget}
	type run struct {
		ids  []string
		done chan askResult
		rel  chan func()
	}
	start := func(sess *legacysession.Session, caller string, lim roundLimits) *run {
		r := &run{done: make(chan askResult, 1), rel: make(chan func(), 1)}
		sent := make(chan []byte, 2)
		go func() {
			out, release, err := rig.b.ask(t.Context(), sess, caller, []era.InputRequest{elicitReq, rootsReq}, lim,
				func(msg []byte) error { sent <- bytes.Clone(msg); return nil })
			r.rel <- release
			r.done <- askResult{out, err}
		}()
		p := &pendingAsk{sent: sent, done: r.done}
		r.ids = p.ids(t, 2)
		return r
	}
	deliver := func(sess *legacysession.Session, caller, id, result string) {
		t.Helper()
		if err := rig.b.deliver(t.Context(), sess, caller, answer(id, result)); err != nil {
			t.Fatalf("answer: %v", err)
		}
	}
	s1, s2, s3 := testSession(1, "p1", allCaps), testSession(2, "p1", allCaps), testSession(3, "p2", allCaps)
	first := start(s1, testCaller, lim)
	deliver(s1, testCaller, first.ids[0], big)
	mcptest.WaitFor(t, "the first answer held", func() bool { return budget.InUse() > 600 })
	held := budget.InUse()

	second := start(s2, testCaller, lim)
	deliver(s2, testCaller, second.ids[0], big)
	var share *callerAnswersError
	if r := (&pendingAsk{done: second.done}).result(t); !errors.As(r.err, &share) || share.Max != 1000 {
		t.Fatalf("a second round of the caller past its share: %v, want *callerAnswersError", r.err)
	}
	if budget.InUse() != held {
		t.Errorf("the refused round left %d bytes charged, want %d", budget.InUse(), held)
	}

	other := start(s3, bob, lim)
	deliver(s3, bob, other.ids[0], big)
	mcptest.WaitFor(t, "another caller's answer held", func() bool { return budget.InUse() == 2*held })

	deliver(s1, testCaller, first.ids[1], rootsRes)
	if r := (&pendingAsk{done: first.done}).result(t); r.err != nil {
		t.Fatalf("the first round: %v", r.err)
	}
	if budget.InUse() <= 2*held {
		t.Errorf("the answers were let go (%d bytes charged) before the request carrying them ended", budget.InUse())
	}
	(<-first.rel)()
	if budget.InUse() != held {
		t.Errorf("%d bytes charged after release, want %d (the other caller's)", budget.InUse(), held)
	}
	rig.b.mu.Lock()
	left := rig.b.heldOf[testCaller]
	rig.b.mu.Unlock()
	if left != 0 {
		t.Errorf("the caller's share still counts %d bytes after release", left)
	}

	full := roundLimits{MaxBytes: 10000, Budget: bodyBudget{bodyread.NewBudget(100)}}
	tight := start(testSession(4, "p1", allCaps), testCaller, full)
	deliver(testSession(4, "p1", allCaps), testCaller, tight.ids[0], big)
	if r := (&pendingAsk{done: tight.done}).result(t); !errors.Is(r.err, errAnswersBudget) {
		t.Fatalf("an answer past the replica's budget: %v, want errAnswersBudget", r.err)
	}
}

// TestLegacyRoundParamsCharged: the round that carries a pre-2026 client's answers on holds
// them twice, the inputResponses object and the params built from it, and both are charged to
// the replica's budget of request bytes in flight until that round has ended. Before, only the
// answers were, so a round held about twice what the budget showed. A pinned 2025-11-25 go-sdk
// client answers three elicitations with a 20 KiB note each; while the backend holds the
// retry that carries them, the budget shows at least twice the notes, and nothing once the call
// is answered.
func TestLegacyRoundParamsCharged(t *testing.T) {
	const note = 20 << 10
	retried, hold := make(chan struct{}, 1), make(chan struct{})
	tool := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState == askThreeState {
			retried <- struct{}{}
			select {
			case <-hold:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return askThreeTool(ctx, req)
	}
	be := mcptest.StartServer(t, "be", mcptest.WithTool(&mcp.Tool{Name: "ask_three",
		InputSchema: &jsonschema.Schema{Type: "object"}}, tool))
	gw, _ := startAskingGateway(t, gwSpec{Server: mcphttp.Config{MaxBodyBytes: 256 << 10}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"note": strings.Repeat("x", note)}}, nil
		}))
	done := callAskThree(t.Context(), cs)
	select {
	case <-retried:
	case err := <-done:
		t.Fatalf("the call ended before its retry reached the backend: %v", err)
	case <-time.After(asksHang): // fail-safe
		t.Fatal("the retry did not reach the backend")
	}
	// Three answers held as the inputResponses object, and again in the params.
	if got, want := gw.mcp.BodyBytesInFlight(), int64(2*3*note); got < want {
		t.Errorf("while the retry runs the budget shows %d bytes, want at least %d (answers and params)", got, want)
	}
	release()
	awaitCall(t, done)
	mcptest.WaitFor(t, "the answers and params given back", func() bool { return gw.mcp.BodyBytesInFlight() == 0 })
}
