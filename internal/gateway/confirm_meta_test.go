package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// metaCall posts a tools/call of alpha__echo with the given _meta members (beside the protocol
// version and capabilities) and extra params members, and decodes the answer.
func metaCall(t *testing.T, gw Listeners, tok, meta, extra, retry string) (int, rpcResult) {
	t.Helper()
	return postCall(t, gw, tok, "alpha__echo", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`+meta+`},"name":"alpha__echo","arguments":{"text":"pay 10"}`+extra+retry)
}

// TestConfirmationBindsForwardedParams: a confirmation binds what the backend receives beyond
// the arguments: the client's own _meta members and params members the gateway does not know.
// A retry that changes, adds or drops one is refused and nothing is forwarded; the members the
// gateway reads itself (progress token, trace context) may differ, and the backend receives the
// bound members as they were confirmed and those as the retry sets them.
func TestConfirmationBindsForwardedParams(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := confirmGateway(t, iss, alpha)
	alice := mintFor(t, iss, "alice")
	const (
		meta  = `,"com.example/dryRun":true,"progressToken":"p1"`
		extra = `,"x-mode":"safe"`
	)
	ask := func() string {
		_, r := metaCall(t, gw, alice, meta, extra, "")
		if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
			t.Fatalf("expected a confirmation, got %+v", r)
		}
		return r.Result.RequestState
	}
	for _, tt := range []struct{ name, meta, extra string }{
		{"vendor _meta changed", `,"com.example/dryRun":false,"progressToken":"p1"`, extra},
		{"vendor _meta dropped", `,"progressToken":"p1"`, extra},
		{"vendor _meta added", meta + `,"com.example/env":"prod"`, extra},
		{"unknown params member changed", meta, `,"x-mode":"force"`},
		{"unknown params member dropped", meta, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			state := ask()
			alpha.Reset()
			status, r := metaCall(t, gw, alice, tt.meta, tt.extra, approve(state))
			if status != 400 || r.Error == nil || r.Error.Message != "Invalid requestState" {
				t.Fatalf("status %d %+v, want 400 Invalid requestState", status, r)
			}
			if len(alpha.Forwarded()) != 0 {
				t.Error("backend reached")
			}
		})
	}
	t.Run("progress token and trace context may change", func(t *testing.T) {
		state := ask()
		alpha.Reset()
		again := `,"com.example/dryRun":true,"progressToken":"p2","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`
		if _, r := metaCall(t, gw, alice, again, extra, approve(state)); r.Error != nil || r.Result.IsError {
			t.Fatalf("approved retry: %+v", r)
		}
		calls := alpha.RequestsOf("tools/call")
		if len(calls) != 1 || !strings.Contains(string(calls[0].Body), `"com.example/dryRun":true`) {
			t.Fatalf("the backend did not receive the confirmed _meta: %d calls", len(calls))
		}
		// The members that say how the call is reported are the retry's, not the first round's.
		if body := string(calls[0].Body); !strings.Contains(body, `"progressToken":"p2"`) || strings.Contains(body, `"p1"`) {
			t.Errorf("the backend did not receive the retry's progress token: %s", body)
		}
	})
}

// TestConfirmationShowsForwardedParams: the person asked to confirm is told of every member the
// confirmation binds beside the arguments (the client's own _meta members, params members the
// gateway does not know), since the backend receives them and may act on them; the members the
// gateway reads itself are not listed, and a call with none says nothing more.
func TestConfirmationShowsForwardedParams(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := confirmGateway(t, iss, alpha)
	alice := mintFor(t, iss, "alice")
	message := func(meta, extra string) string {
		t.Helper()
		_, r := metaCall(t, gw, alice, meta, extra, "")
		var reqs map[string]struct {
			Params struct{ Message string }
		}
		if err := json.Unmarshal(r.Result.InputRequests, &reqs); err != nil || len(reqs) != 1 {
			t.Fatalf("expected one confirmation, got %+v", r)
		}
		for _, q := range reqs {
			return q.Params.Message
		}
		return ""
	}
	msg := message(`,"com.example/dryRun":false,"progressToken":"p1"`, `,"x-mode":"force"`)
	for _, want := range []string{`text="pay 10"`, `also sending the backend: `, `_meta={"com.example/dryRun":false}`, `x-mode="force"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "progressToken") || strings.Contains(msg, "protocolVersion") {
		t.Errorf("message %q lists a member the gateway reads itself", msg)
	}
	if msg := message(`,"progressToken":"p1"`, ""); strings.Contains(msg, "also sending") {
		t.Errorf("message %q lists members of a call that has none", msg)
	}
}

// TestConfirmationBindsWhatTheClientDeclares: a confirmation, a page's approval and a backend's
// own round are bound to what the client declared of itself when it was asked (its capabilities,
// its clientInfo): a retry that declares more (sampling, roots, the tasks extension, through
// which the backend could ask the client or answer in ways the person confirming never saw
// possible), less, or another client is refused and nothing reaches the backend; the same
// declaration in another order or spelling goes through, and the backend receives it.
func TestConfirmationBindsWhatTheClientDeclares(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	form, page := confirmGateway(t, iss, alpha), approvalRulesGateway(t, iss, alpha)
	alice := mintFor(t, iss, "alice")
	meta := func(caps, info string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` +
			caps + `,"io.modelcontextprotocol/clientInfo":` + info + `}`
	}
	const (
		caps = `{"elicitation":{"form":{},"url":{}}}`
		info = `{"name":"app","version":"1"}`
	)
	answered := func(state string) string {
		return `,"inputResponses":{"io.mcp-gateway/confirm":{"action":"accept","content":{"approve":true}},` +
			`"name":{"action":"accept","content":{"name":"Eve"}}},"requestState":"` + state + `"`
	}
	kinds := []struct {
		name, tool, args string
		gw               Listeners
	}{
		{"form confirmation", "alpha__echo", `{"text":"pay 10"}`, form},
		{"backend's round", "alpha__ask_name", `{}`, form},
		{"page approval", "alpha__echo", `{"text":"pay 10"}`, page},
	}
	ask := func(gw Listeners, tool, args string) string {
		t.Helper()
		_, r := callWithMeta(t, gw, alice, meta(caps, info), tool, args, "")
		if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
			t.Fatalf("%s: expected a round, got %+v %+v", tool, r, r.Error)
		}
		return r.Result.RequestState
	}
	for _, k := range kinds {
		for _, v := range []struct{ name, caps, info string }{
			{"sampling added", `{"elicitation":{"form":{},"url":{}},"sampling":{}}`, info},
			{"roots added", `{"elicitation":{"form":{},"url":{}},"roots":{}}`, info},
			{"tasks extension added", `{"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}`, info},
			{"elicitation narrowed", `{"elicitation":{"form":{}}}`, info},
			{"another client", caps, `{"name":"other","version":"1"}`},
			{"no client info", caps, `null`},
		} {
			t.Run(k.name+"/"+v.name, func(t *testing.T) {
				state := ask(k.gw, k.tool, k.args)
				alpha.Reset()
				m := meta(v.caps, v.info)
				if v.info == `null` {
					m = strings.Replace(m, `,"io.modelcontextprotocol/clientInfo":null`, "", 1)
				}
				status, r := callWithMeta(t, k.gw, alice, m, k.tool, k.args, answered(state))
				if status != 400 || r.Error == nil || r.Error.Message != "Invalid requestState" {
					t.Errorf("status %d %+v %+v, want 400 Invalid requestState", status, r.Error, r.Result)
				}
				if n := toolCalls(alpha); n != 0 {
					t.Errorf("backend reached %d times", n)
				}
			})
		}
	}
	// A declaration parsers read differently (a lone surrogate escape) cannot be bound: the
	// client is told so, not that its arguments are wrong.
	status, r := callWithMeta(t, form, alice, meta(caps, `{"name":"app\ud800","version":"1"}`), "alpha__echo", `{"text":"pay 10"}`, "")
	if status != 400 || r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "the request's other members cannot be confirmed") {
		t.Errorf("a clientInfo with a lone surrogate: %d %+v", status, r.Error)
	}
	// The same declaration, in another order and spelling, answers the form and the backend.
	same := meta(`{"elicitation":{"url":{},"form":{}}}`, `{"version":"1","name":"\u0061pp"}`)
	for _, k := range kinds[:2] {
		state := ask(k.gw, k.tool, k.args)
		alpha.Reset()
		_, r := callWithMeta(t, k.gw, alice, same, k.tool, k.args, answered(state))
		calls := alpha.RequestsOf("tools/call")
		if r.Error != nil || r.Result.IsError || r.Result.ResultType == "input_required" || len(calls) != 1 {
			t.Fatalf("%s under the same declaration: %+v %+v, %d calls", k.name, r.Error, r.Result, len(calls))
		}
		if !strings.Contains(string(calls[0].Body), `"url":{}`) {
			t.Errorf("%s: the backend did not receive the declared capabilities", k.name)
		}
	}
}
