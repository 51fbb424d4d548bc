package mcphttp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestInterceptorsShownOnlyWhatParsersReadAlike: an interceptor judges a call as its own JSON
// parser reads it, the backend acts on it as its parser reads it, and the gateway knows neither.
// A request holding a number that parsers read as different values (an integer beyond ±2^53,
// which a decoder into doubles reads as a neighbour and one into integers exactly; a fraction
// no double says as written) or a string with a lone surrogate escape (U+FFFD to Go, the
// surrogate itself to JavaScript) is refused with 400/-32602 before any interceptor is asked,
// wherever it sits in what the interceptor is shown, as it is before a person is asked to
// confirm. Here a validator that decodes into doubles, as Go's interface{} and JavaScript do,
// allows only account 9007199254740992; before, it allowed 9007199254740993, which it read as
// that account, and the backend received 9007199254740993.
func TestInterceptorsShownOnlyWhatParsersReadAlike(t *testing.T) {
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "accounts", Type: intercept.TypeValidation, Handle: allowsAccount}})
	pay := &mcp.Tool{Name: "pay", InputSchema: map[string]any{"type": "object"}}
	gw, be := startIntercepted(t, []intercept.Config{governs("accounts", ics.URL(), intercept.TypeValidation, "request", []string{"pay"}, nil, nil)},
		mcptest.WithTool(pay, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "paid"}}}, nil
		}))
	call := func(args, meta string) *response {
		return do(t, "POST", gw.URL, modern("tools/call", "be__pay"),
			body("tools/call", `,"name":"be__pay","arguments":{`+args+`}`+meta))
	}
	ics.Reset()
	checkRPC(t, call(`"account":9007199254740992`, ""), 0)
	if n := len(ics.Invocations()); n != 1 {
		t.Fatalf("%d invocations for the allowed account", n)
	}
	for _, tt := range []struct{ name, args, meta string }{
		{"an integer beyond 2^53", `"account":9007199254740993`, ""},
		{"a negative one", `"account":-9007199254740993`, ""},
		{"written with a fraction", `"account":9007199254740993.0`, ""},
		{"a fraction no double says", `"account":9007199254740992,"share":0.10000000000000001`, ""},
		{"an exponent beyond doubles", `"account":9007199254740992,"share":1e400`, ""},
		{"nested", `"account":9007199254740992,"to":[{"id":12345678901234567890}]`, ""},
		{"a lone surrogate", `"account":9007199254740992,"memo":"\ud800"`, ""},
		{"in another member of the params", `"account":9007199254740992`, `,"x-batch":{"id":9007199254740993}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ics.Reset()
			be.Reset()
			checkRPC(t, call(tt.args, tt.meta), -32602)
			if n := len(ics.Invocations()); n != 0 {
				t.Errorf("the interceptor was asked %d times", n)
			}
			if n := len(be.RequestsOf("tools/call")); n != 0 {
				t.Errorf("the backend got %d calls", n)
			}
		})
	}
}

// TestInterceptMutationReadAlike: what a mutator writes is held to the rule the client's call is
// (TestInterceptorsShownOnlyWhatParsersReadAlike): a mutated call holding a number parsers read
// as different values, or a lone surrogate escape, is a malformed mutation, a failure of the
// mutator routed by its failOpen, never shown to the validators after it nor forwarded. Here a
// mutator writes the account, and a validator decoding into doubles allows only account
// 9007199254740992; before, it allowed 9007199254740993, which the backend received.
func TestInterceptMutationReadAlike(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		failOpen    bool
	}{
		{"an integer beyond 2^53", `9007199254740993`, false},
		{"written with a fraction", `9007199254740993.0`, false},
		{"an exponent beyond doubles", `9007199254740992,"share":1e400`, false},
		{"a fraction no double says", `9007199254740992,"share":0.10000000000000001`, false},
		{"a lone surrogate", `9007199254740992,"memo":"\ud800"`, false},
		// Fail-open: the call goes on as the client sent it, judged as such.
		{"fail-open", `9007199254740993`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ics := intercepttest.Start(t, []intercepttest.Interceptor{
				{Name: "writer", Type: intercept.TypeMutation, Handle: replace(`"account":1`, `"account":`+tt.value)},
				{Name: "accounts", Type: intercept.TypeValidation, Handle: allowsAccount},
			})
			writer := governs("writer", ics.URL(), intercept.TypeMutation, "request", []string{"pay"}, nil, nil)
			writer.FailOpen = tt.failOpen
			pay := &mcp.Tool{Name: "pay", InputSchema: map[string]any{"type": "object"}}
			gw, be := startIntercepted(t, []intercept.Config{
				writer, governs("accounts", ics.URL(), intercept.TypeValidation, "request", []string{"pay"}, nil, nil),
			}, mcptest.WithTool(pay, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "paid"}}}, nil
			}))
			r := do(t, "POST", gw.URL, modern("tools/call", "be__pay"), body("tools/call", `,"name":"be__pay","arguments":{"account":1}`))
			if n := len(be.RequestsOf("tools/call")); n != 0 {
				t.Errorf("the backend got %d calls", n)
			}
			shown := 0
			for _, inv := range ics.Invocations() {
				if inv.Name == "accounts" {
					shown++
					if !strings.Contains(string(inv.Payload), `"account":1}`) {
						t.Errorf("the validator was shown the mutation: %s", inv.Payload)
					}
				}
			}
			if !tt.failOpen {
				checkRPC(t, r, -32014)
				if shown != 0 {
					t.Errorf("the validator was asked %d times", shown)
				}
				return
			}
			checkRPC(t, r, 0)
			if shown != 1 || !strings.Contains(string(r.Body), "refused by the gateway's interceptor accounts") {
				t.Errorf("the validator was asked %d times; the answer %s", shown, r.Body)
			}
		})
	}
}

// allowsAccount is a validator that decodes into doubles, as Go's interface{} and JavaScript do,
// and allows only a call whose arguments' account it reads as 9007199254740992.
func allowsAccount(_ context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
	var p struct {
		Params struct {
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
	}
	ok := json.Unmarshal(inv.Payload, &p) == nil && p.Params.Arguments["account"] == float64(9007199254740992)
	return intercepttest.Validation(inv, ok, "not an allowed account"), nil
}
