package pre2026

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
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
