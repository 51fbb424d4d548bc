package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

var testKeys = []KeyConfig{{ID: "k1", Secret: Secret{Value: "a-test-only-secret-of-at-least-32-bytes"}}}

// confirmGateway fronts alpha with a policy that lets anyone with tools:use call every tool and
// requires confirmation for echo.
func confirmGateway(t *testing.T, iss *devissuer.Issuer, alpha *mcptest.Server) Listeners {
	t.Helper()
	return startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "echo-confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			{ID: "rest", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}},
		}
	}, alpha)
}

// TestConfirmation: the go-sdk client answers the gateway's input_required confirmation; only an
// approved retry reaches the backend, exactly once.
func TestConfirmation(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := confirmGateway(t, iss, alpha)
	url := "http://" + gw.MCP + "/mcp"
	tok := mintFor(t, iss, "alice")
	ctx := context.Background()
	call := &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "rm -rf"}}

	t.Run("approved", func(t *testing.T) {
		var asked string
		cs := mcptest.Connect(t, url, mcptest.WithBearer(tok), mcptest.WithElicitation(
			func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = req.Params.Message
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			}))
		alpha.Reset()
		res, err := cs.CallTool(ctx, call)
		if err != nil || res.IsError || mcptest.ResultText(res) != "rm -rf" {
			t.Fatalf("approved call: %v %+v", err, res)
		}
		if !strings.Contains(asked, "alpha__echo") {
			t.Errorf("confirmation message %q does not name the tool", asked)
		}
		if n := len(alpha.Forwarded()); n != 1 {
			t.Errorf("backend received %d requests, want exactly 1", n)
		}
	})
	t.Run("declined", func(t *testing.T) {
		cs := mcptest.Connect(t, url, mcptest.WithBearer(tok), mcptest.WithElicitation(mcptest.Decline()))
		alpha.Reset()
		res, err := cs.CallTool(ctx, call)
		if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "did not approve") {
			t.Fatalf("declined call: %v %+v", err, res)
		}
		if n := len(alpha.Forwarded()); n != 0 {
			t.Errorf("backend received %d requests after a decline", n)
		}
	})
	// The README: cancel is answered like decline, and a retry without an answer is asked again.
	t.Run("cancelled", func(t *testing.T) {
		cs := mcptest.Connect(t, url, mcptest.WithBearer(tok), mcptest.WithElicitation(
			func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}))
		alpha.Reset()
		res, err := cs.CallTool(ctx, call)
		if err != nil || !res.IsError {
			t.Fatalf("cancelled call: %v %+v", err, res)
		}
		if n := len(alpha.Forwarded()); n != 0 {
			t.Errorf("backend received %d requests after a cancel", n)
		}
	})
	t.Run("missing answer", func(t *testing.T) {
		alpha.Reset()
		_, first := rawCall(t, gw, tok, "alpha__echo", `{"text":"x"}`, "")
		_, again := rawCall(t, gw, tok, "alpha__echo", `{"text":"x"}`, `,"requestState":"`+first.Result.RequestState+`"`)
		if first.Result.ResultType != "input_required" || again.Result.ResultType != "input_required" ||
			again.Result.RequestState == "" || len(alpha.Forwarded()) != 0 {
			t.Fatalf("a retry without an answer: %+v, then %+v, backend calls %d", first, again, len(alpha.Forwarded()))
		}
	})
	t.Run("no elicitation capability", func(t *testing.T) {
		alpha.Reset()
		h := modernHeaders("tools/call", "alpha__echo")
		h.Set("Authorization", "Bearer "+tok)
		status, _, body := post(t, url, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+testMeta+`,"name":"alpha__echo","arguments":{"text":"x"}}}`)
		if status != 400 || !strings.Contains(body, "-32021") || !strings.Contains(body, `"requiredCapabilities":{"elicitation":{}}`) {
			t.Fatalf("without elicitation: %d %s", status, body)
		}
		if len(alpha.Forwarded()) != 0 {
			t.Error("backend reached")
		}
	})
}

const elicitMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

type rpcResult struct {
	Result struct {
		ResultType    string          `json:"resultType"`
		RequestState  string          `json:"requestState"`
		InputRequests json.RawMessage `json:"inputRequests"`
		IsError       bool            `json:"isError"`
		Content       []struct{ Text string }
	} `json:"result"`
	Error *struct {
		Code    int
		Message string
	} `json:"error"`
}

// rawCall posts a tools/call (optionally a retry) and decodes the final JSON-RPC message.
func rawCall(t *testing.T, gw Listeners, tok, name, args, retry string) (int, rpcResult) {
	t.Helper()
	return postCall(t, gw, tok, name, elicitMeta+`,"name":"`+name+`","arguments":`+args+retry)
}

// postCall posts a tools/call of name whose params hold members (without the braces) and
// decodes the final JSON-RPC message.
func postCall(t *testing.T, gw Listeners, tok, name, members string) (int, rpcResult) {
	t.Helper()
	h := modernHeaders("tools/call", name)
	if tok != "" {
		h.Set("Authorization", "Bearer "+tok)
	}
	status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", h,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+members+`}}`)
	if strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		body = string(mcptest.LastSSEData([]byte(body)))
	}
	var r rpcResult
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("%d %s: %v", status, body, err)
	}
	return status, r
}

// tamper changes one character in the middle of a sealed value, always to another one: a
// change at the end may leave the string as it was (the last characters of base64 carry few
// bits, and may already be the replacement), which let a "tampered" value through by chance.
func tamper(sealed string) string {
	b := []byte(sealed)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func approve(state string) string {
	return `,"inputResponses":{"io.mcp-gateway/confirm":{"action":"accept","content":{"approve":true}}},"requestState":"` + state + `"`
}

// TestConfirmationStateAttacks: a confirmation is single-use, bound to the user, the tool and the
// arguments, and tamper-evident; every rejection is -32602 and nothing reaches the backend.
func TestConfirmationStateAttacks(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := confirmGateway(t, iss, alpha)
	alice, mallory := mintFor(t, iss, "alice"), mintFor(t, iss, "mallory")
	ask := func() string {
		_, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, "")
		if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
			t.Fatalf("expected a confirmation, got %+v", r)
		}
		return r.Result.RequestState
	}
	state := ask()
	tests := []struct {
		name, tok, tool, args, retry string
	}{
		{"other user", mallory, "alpha__echo", `{"text":"pay 10"}`, approve(state)},
		{"other arguments", alice, "alpha__echo", `{"text":"pay 1000"}`, approve(state)},
		{"other tool", alice, "alpha__add", `{"text":"pay 10"}`, approve(state)},
		{"tampered", alice, "alpha__echo", `{"text":"pay 10"}`, approve(tamper(state))},
		{"truncated", alice, "alpha__echo", `{"text":"pay 10"}`, approve(state[:len(state)/2])},
		{"oversized", alice, "alpha__echo", `{"text":"pay 10"}`, approve(strings.Repeat("A", 20000))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alpha.Reset()
			status, r := rawCall(t, gw, tt.tok, tt.tool, tt.args, tt.retry)
			if status != 400 || r.Error == nil || r.Error.Code != -32602 || r.Error.Message != "Invalid requestState" {
				t.Fatalf("status %d %+v, want 400 -32602 Invalid requestState", status, r)
			}
			if len(alpha.Forwarded()) != 0 {
				t.Error("backend reached")
			}
		})
	}
	t.Run("approved once, replay refused", func(t *testing.T) {
		alpha.Reset()
		if _, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)); r.Error != nil || r.Result.IsError {
			t.Fatalf("first approval: %+v", r)
		}
		status, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state))
		if status != 400 || r.Error == nil || r.Error.Code != -32602 {
			t.Fatalf("replay: %d %+v", status, r)
		}
		if n := toolCalls(alpha); n != 1 {
			t.Errorf("backend received %d tools/call requests, want 1", n)
		}
	})
	t.Run("missing answer asks again", func(t *testing.T) {
		st := ask()
		_, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, `,"inputResponses":{},"requestState":"`+st+`"`)
		if r.Result.ResultType != "input_required" || r.Result.RequestState == st {
			t.Fatalf("missing answer: %+v", r)
		}
	})
}

// TestBackendRoundTripAcrossReplicas: a backend's own input_required started on one gateway
// process completes on another that shares only the keys, and only for the same user.
func TestBackendRoundTripAcrossReplicas(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw1, gw2 := confirmGateway(t, iss, alpha), confirmGateway(t, iss, alpha)
	alice, mallory := mintFor(t, iss, "alice"), mintFor(t, iss, "mallory")

	_, r := rawCall(t, gw1, alice, "alpha__ask_name", `{}`, "")
	if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("ask_name round 1: %+v", r)
	}
	if strings.Contains(r.Result.RequestState, mcptest.AskNameState) {
		t.Fatalf("the backend's state reached the client in clear: %s", r.Result.RequestState)
	}
	var reqs map[string]json.RawMessage
	if err := json.Unmarshal(r.Result.InputRequests, &reqs); err != nil || len(reqs) != 1 {
		t.Fatalf("inputRequests = %s", r.Result.InputRequests)
	}
	var key string
	for k := range reqs {
		key = k
	}
	retry := `,"inputResponses":{"` + key + `":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + r.Result.RequestState + `"`
	if status, r := rawCall(t, gw2, mallory, "alpha__ask_name", `{}`, retry); status != 400 || r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("another user's retry: %d %+v", status, r)
	}
	_, r2 := rawCall(t, gw2, alice, "alpha__ask_name", `{}`, retry)
	if r2.Error != nil || r2.Result.ResultType != "complete" || len(r2.Result.Content) == 0 || !strings.Contains(r2.Result.Content[0].Text, "Ada") {
		t.Fatalf("retry on the second replica: %+v", r2)
	}
}

// TestBackendRoundTripWithClient: the go-sdk client answers a backend's elicitation through the
// gateway automatically.
func TestBackendRoundTripWithClient(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) { c.MRTR.Keys = testKeys }, alpha)
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithElicitation(mcptest.Accept(map[string]any{"name": "Grace"})))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__ask_name", Arguments: map[string]any{}})
	if err != nil || !strings.Contains(mcptest.ResultText(res), "Grace") {
		t.Fatalf("ask_name: %v %+v", err, res)
	}
}

// TestRateLimit: a policy rule's rateLimit is enforced per caller and tool, answered with 429,
// Retry-After and -32012, and callers do not share buckets.
func TestRateLimit(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "limited", Upstream: "alpha", Tools: []string{"add"}, AnyScope: []string{"tools:use"}, RateLimit: "2/m"},
		}
	}, alpha)
	alice, bob := mintFor(t, iss, "alice"), mintFor(t, iss, "bob")
	h := func(tok string) (int, string, string) {
		hd := modernHeaders("tools/call", "alpha__add")
		hd.Set("Authorization", "Bearer "+tok)
		status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", hd,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+testMeta+`,"name":"alpha__add","arguments":{"a":1,"b":2}}}`)
		return status, hdr.Get("Retry-After"), body
	}
	for i := range 2 {
		if status, _, body := h(alice); status != 200 {
			t.Fatalf("call %d: %d %s", i+1, status, body)
		}
	}
	alpha.Reset()
	status, retry, body := h(alice)
	if status != 429 || retry == "" || !strings.Contains(body, "-32012") {
		t.Fatalf("third call: %d Retry-After=%q %s", status, retry, body)
	}
	if len(alpha.Forwarded()) != 0 {
		t.Error("a rate-limited call reached the backend")
	}
	if status, _, body := h(bob); status != 200 {
		t.Fatalf("bob shares alice's bucket: %d %s", status, body)
	}
}
