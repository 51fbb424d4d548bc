package pre2026

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdkjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// mrtrWords are the 2026-07-28 terms a pre-2026 client never sent: no error it gets may use
// them, nor the names of the gateway's packages.
var mrtrWords = []string{"inputResponses", "requestState", "mrtr", "MRTR", "input_required", "inputRequests", "asks:"}

// noMRTRWords fails t when msg speaks of what a pre-2026 client never sent.
func noMRTRWords(t *testing.T, msg string) {
	t.Helper()
	for _, w := range mrtrWords {
		if strings.Contains(msg, w) {
			t.Errorf("the message speaks of %q: %s", w, msg)
		}
	}
}

// sseMessage is one JSON-RPC message of a call's event stream.
type sseMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// answerConfirmationRaw calls be__wipe as a raw pre-2026 client of version v that declares
// elicitation, answers the gateway's elicitation/create with result (a shape the go-sdk client
// would not send), after calling between with the session and the request's id, and returns
// the call's last message.
func answerConfirmationRaw(t *testing.T, url, v, result string, between func(sid string, id json.RawMessage)) sseMessage {
	t.Helper()
	sid, _ := legacyInit(t, url, v, `{"elicitation":{}}`)
	req, err := http.NewRequestWithContext(t.Context(), "POST", url,
		strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"be__wipe","arguments":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = legacyHeaders(v, sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m sseMessage
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		switch {
		case m.Method == "elicitation/create":
			between(sid, m.ID)
			r := do(t, "POST", url, legacyHeaders(v, sid), `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+result+`}`)
			if r.Status != http.StatusAccepted {
				t.Fatalf("the answer: %d %s", r.Status, r.Body)
			}
		case string(m.ID) == "5":
			return m
		}
	}
	t.Fatalf("the stream ended without the call's answer: %v", sc.Err())
	return sseMessage{}
}

// TestLegacyConfirmationAnswerErrors: a pre-2026 client whose answer to the gateway's
// confirmation form cannot be read is told, with -32602 on the call, what was wrong with its
// answer to elicitation/create, in its own terms (never inputResponses or mrtr, which it never
// sent), and the tool is not run. The go-sdk client checks its content against the form's
// schema before answering, so these shapes are sent by hand; its own refusal, an error answer,
// is named to it as such (the go-sdk case).
func TestLegacyConfirmationAnswerErrors(t *testing.T) {
	var runs atomic.Int32
	be := mcptest.StartServer(t, "be", destructiveTool(&runs))
	gw, _ := startAskingGateway(t, gwSpec{Server: mcphttp.Config{ConfirmDestructiveTools: true}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	const (
		noApprove = `The answer to the gateway's confirmation request (elicitation/create) has action "accept" but no boolean ` +
			`"approve" in its content: accept with content {"approve": true} to run the call, or decline; the call was not run`
		noContent = `The answer to the gateway's confirmation request (elicitation/create) has action "accept" but no content ` +
			`object: accept with content {"approve": true} to run the call, or decline; the call was not run`
	)
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		for _, tt := range []struct{ what, result, want string }{
			{"no approve", `{"action":"accept","content":{"other":true}}`, noApprove},
			{"approve as a string", `{"action":"accept","content":{"approve":"true"}}`, noApprove},
			{"approve as a number", `{"action":"accept","content":{"approve":1}}`, noApprove},
			{"approve null", `{"action":"accept","content":{"approve":null}}`, noApprove},
			{"no content", `{"action":"accept"}`, noContent},
			{"content not an object", `{"action":"accept","content":["approve"]}`, noContent},
		} {
			t.Run(v+"/"+tt.what, func(t *testing.T) {
				m := answerConfirmationRaw(t, gw.URL, v, tt.result, func(string, json.RawMessage) {})
				if m.Error == nil || m.Error.Code != -32602 || m.Error.Message != tt.want {
					t.Fatalf("got %+v %s, want -32602 %q", m.Error, m.Result, tt.want)
				}
				noMRTRWords(t, m.Error.Message)
			})
		}
		t.Run(v+"/an action it does not have", func(t *testing.T) {
			// Refused on its own POST, saying what the result needs; the request still waits,
			// and the client's good answer that follows is taken.
			m := answerConfirmationRaw(t, gw.URL, v, `{"action":"decline"}`, func(sid string, id json.RawMessage) {
				for _, res := range []string{`{"action":"approve"}`, `{"content":{"approve":true}}`, `{"action":["accept"]}`} {
					r := do(t, "POST", gw.URL, legacyHeaders(v, sid), `{"jsonrpc":"2.0","id":`+string(id)+`,"result":`+res+`}`)
					const want = `Invalid params: this answer to elicitation/create was not taken: its result needs an "action" of ` +
						`"accept", "decline" or "cancel"; answer again`
					if r.RPC.Error == nil || r.RPC.Error.Code != -32602 || r.RPC.Error.Message != want {
						t.Errorf("%s: %d %s, want -32602 %q", res, r.Status, r.Body, want)
					}
				}
			})
			if m.Error != nil || !strings.Contains(string(m.Result), `"isError":true`) {
				t.Fatalf("declined after the bad answers: %+v %s", m.Error, m.Result)
			}
		})
		t.Run(v+"/go-sdk refuses its own answer", func(t *testing.T) {
			cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion(v), mcptest.WithElicitation(mcptest.Accept(map[string]any{"approve": "yes"})))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__wipe", Arguments: map[string]any{}})
			if err != nil || !res.IsError || !strings.HasPrefix(mcptest.ResultText(res),
				"The call to be__wipe failed: the client answered elicitation/create with an error instead of a result: ") {
				t.Fatalf("got %v %+v %q", err, res, mcptest.ResultText(res))
			}
			noMRTRWords(t, mcptest.ResultText(res))
		})
	}
	if runs.Load() != 0 {
		t.Fatalf("the tool ran %d times", runs.Load())
	}
}

// TestLegacyConfirmationAnsweredTooLate: a pre-2026 client whose user answers the gateway's
// confirmation after the sealed state of the call's first round expired (mrtr.ttl shorter than
// legacy.askTimeout) is told that its answers came too late and to call again, never "Invalid
// requestState", a state it never held; a 2026-07-28 client still gets the one generic message.
func TestLegacyConfirmationAnsweredTooLate(t *testing.T) {
	var runs atomic.Int32
	be := mcptest.StartServer(t, "be", destructiveTool(&runs))
	clock := mcptest.NewClock(time.Now())
	replays, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := mrtr.New(testStateSealer(t), mrtr.Config{}, replays, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	spec := gwSpec{Server: mcphttp.Config{ConfirmDestructiveTools: true}}
	spec.Deps.MRTR = codec
	gw, _ := startLegacyGateway(t, spec, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	const want = "The gateway could not go on with this call after the client's answers: its record of the call's " +
		"earlier round is no longer valid (it lasts a limited time: the answers may have come too late), so they " +
		"were not sent on; call again"
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(v+"/raw", func(t *testing.T) {
			m := answerConfirmationRaw(t, gw.URL, v, `{"action":"accept","content":{"approve":true}}`,
				func(string, json.RawMessage) { clock.Advance(mrtr.DefaultTTL + time.Minute) })
			if m.Error == nil || m.Error.Code != -32602 || m.Error.Message != want {
				t.Fatalf("got %+v %s, want -32602 %q", m.Error, m.Result, want)
			}
		})
		t.Run(v+"/go-sdk", func(t *testing.T) {
			cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion(v), mcptest.WithElicitation(
				func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					clock.Advance(mrtr.DefaultTTL + time.Minute)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
				}))
			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__wipe", Arguments: map[string]any{}})
			var we *sdkjsonrpc.Error
			if !errors.As(err, &we) || we.Code != -32602 || we.Message != want {
				t.Fatalf("got %v, want -32602 %q", err, want)
			}
			noMRTRWords(t, we.Message)
		})
	}
	if runs.Load() != 0 {
		t.Fatalf("the tool ran %d times", runs.Load())
	}
}

// TestModernConfirmationAnswerErrorsUnchanged: a 2026-07-28 client, which does send
// inputResponses and requestState, keeps the texts that name them, on the same gateway as the
// pre-2026 clients of TestLegacyConfirmationAnswerErrors.
func TestModernConfirmationAnswerErrorsUnchanged(t *testing.T) {
	var runs atomic.Int32
	be := mcptest.StartServer(t, "be", destructiveTool(&runs))
	gw, _ := startAskingGateway(t, gwSpec{Server: mcphttp.Config{ConfirmDestructiveTools: true}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	call := func(extra string) *response {
		return do(t, "POST", gw.URL, mcptest.RequestHeaders("tools/call", "be__wipe"),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"be__wipe","arguments":{}`+extra+`}}`)
	}
	first := call("")
	var ir struct {
		RequestState string `json:"requestState"`
	}
	if first.Status != 200 || json.Unmarshal(first.RPC.Result, &ir) != nil || ir.RequestState == "" {
		t.Fatalf("first call: %d %s", first.Status, first.Body)
	}
	state := `,"requestState":"` + ir.RequestState + `"`
	for _, tt := range []struct{ answer, want string }{
		{`{"action":"accept","content":{"approve":"true"}}`, `Invalid params: inputResponses: mrtr: malformed confirmation response: accept without a boolean "approve"`},
		{`{"action":"accept"}`, `Invalid params: inputResponses: mrtr: malformed confirmation response: accept without content`},
	} {
		r := call(`,"inputResponses":{"` + mrtr.ConfirmKey + `":` + tt.answer + `}` + state)
		if r.Status != 400 || r.RPC.Error == nil || r.RPC.Error.Code != -32602 || r.RPC.Error.Message != tt.want {
			t.Errorf("%s: %d %s, want 400 -32602 %q", tt.answer, r.Status, r.Body, tt.want)
		}
	}
	if r := call(`,"inputResponses":{"` + mrtr.ConfirmKey + `":{"action":"accept","content":{"approve":true}}},"requestState":"x"`); r.Status != 400 ||
		r.RPC.Error == nil || r.RPC.Error.Message != mrtr.ClientMessage {
		t.Errorf("a bad requestState: %d %s, want %q", r.Status, r.Body, mrtr.ClientMessage)
	}
	if runs.Load() != 0 {
		t.Fatalf("the tool ran %d times", runs.Load())
	}
}

// TestLegacyUnreadableAnswer: a pre-2026 client's response the gateway cannot read as an answer
// (a result that is not an object, both a result and an error) is told what a response needs,
// never that clients must not send responses, which a 2025 client does; a 2026-07-28 client,
// which must not, is still told so.
func TestLegacyUnreadableAnswer(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startAskingGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	const want = `Invalid Request: this answer cannot be read: a response needs a "result" object or an "error" object ` +
		`with a "code" and a "message", not both`
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		sid, _ := legacyInit(t, gw.URL, v, `{"elicitation":{}}`)
		for _, b := range []string{`{"jsonrpc":"2.0","id":"x","result":"accept"}`, `{"jsonrpc":"2.0","id":"x","result":[1]}`,
			`{"jsonrpc":"2.0","id":"x","result":{},"error":{"code":1,"message":"m"}}`} {
			r := do(t, "POST", gw.URL, legacyHeaders(v, sid), b)
			if r.Status != http.StatusBadRequest || r.RPC.Error == nil || r.RPC.Error.Code != -32600 || r.RPC.Error.Message != want {
				t.Errorf("%s %s: %d %s, want 400 -32600 %q", v, b, r.Status, r.Body, want)
			}
		}
	}
	r := do(t, "POST", gw.URL, mcptest.RequestHeaders("tools/call", ""), `{"jsonrpc":"2.0","id":"x","result":"accept"}`)
	if r.RPC.Error == nil || r.RPC.Error.Message != "Invalid Request: clients must not send responses" {
		t.Errorf("a 2026-07-28 client's response: %d %s", r.Status, r.Body)
	}
}

// TestConfirmationNotCarriedAcrossEras: a confirmation a 2026-07-28 client was asked, its
// requestState and an approving answer handed to a 2025-11-25 go-sdk client of the same gateway,
// is not answered by them: the edge drops both, asks its own client afresh on its session, and
// the call runs only as that client answers (declined: never; approved: once).
func TestConfirmationNotCarriedAcrossEras(t *testing.T) {
	var runs atomic.Int32
	be := mcptest.StartServer(t, "be", destructiveTool(&runs))
	gw, asker := startAskingGateway(t, gwSpec{Server: mcphttp.Config{ConfirmDestructiveTools: true}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	first := do(t, "POST", gw.URL, mcptest.RequestHeaders("tools/call", "be__wipe"),
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"be__wipe","arguments":{}}}`)
	var ir struct {
		RequestState string `json:"requestState"`
	}
	if first.Status != 200 || json.Unmarshal(first.RPC.Result, &ir) != nil || ir.RequestState == "" {
		t.Fatalf("first call: %d %s", first.Status, first.Body)
	}
	call := &mcp.CallToolParams{Name: "be__wipe", Arguments: map[string]any{}, RequestState: ir.RequestState,
		InputResponses: mcp.InputResponseMap{mrtr.ConfirmKey: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}}
	decline := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithElicitation(mcptest.Decline()))
	res, err := decline.CallTool(t.Context(), call)
	if err != nil || !res.IsError || runs.Load() != 0 {
		t.Fatalf("the 2026 client's state and answer from a 2025 client that declines: %v %+v, runs %d", err, res, runs.Load())
	}
	if got := asker.askedMethods(); len(got) != 1 || got[0] != "elicitation/create" {
		t.Fatalf("asked %v, want the 2025 client asked once", got)
	}
	approve := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(mcptest.Accept(map[string]any{"approve": true})))
	if res, err := approve.CallTool(t.Context(), call); err != nil || res.IsError || runs.Load() != 1 {
		t.Fatalf("approved by the 2025 client: %v %+v, runs %d", err, res, runs.Load())
	}
}
