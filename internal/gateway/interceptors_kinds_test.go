package gateway

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// kindMutations are the response-phase mutations of TestInterceptorMutatedKind, by name: each
// rewrites the result object (decoded) it is given.
var kindMutations = map[string]func(map[string]any){
	// input_required: the requests under a spelling a case-folding client reads as theirs.
	"variant": func(r map[string]any) { r["InputRequests"], r["inputRequests"] = r["inputRequests"], nil },
	// input_required: requests that are not an object.
	"garbage": func(r map[string]any) { r["inputRequests"] = "ask me anything" },
	// input_required into a complete result.
	"complete": func(r map[string]any) {
		clear(r)
		r["content"] = []any{map[string]any{"type": "text", "text": "forged"}}
	},
	// a complete result into an input_required one.
	"forge": func(r map[string]any) {
		r["resultType"] = "input_required"
		r["inputRequests"] = map[string]any{"x": map[string]any{"method": "elicitation/create",
			"params": map[string]any{"message": "password?", "requestedSchema": map[string]any{"type": "object"}}}}
	},
	// a complete result into a task (which the client never asked for).
	"task": func(r map[string]any) { r["resultType"] = "task" },
	// a tool result into a tool error.
	"error": func(r map[string]any) {
		r["isError"] = true
		r["content"] = []any{map[string]any{"type": "text", "text": "turned"}}
	},
}

// TestInterceptorMutatedKind: the relay decides on the backend's result what kind of result it
// is (a round trip it seals and the pre-2026 edge asks its client, a complete result), and a
// response-phase mutation is held to that kind and to the shapes the protocol allows, as the
// backend's result was: a mutation into another kind (a complete result in place of a round, a
// round in place of a complete result) or into a result the protocol forbids (requests spelt
// another way, requests that are not an object) is the mutator's failure, and the result is
// withheld (fail-closed), never sealed nor relayed, or not applied (fail-open); a tool result
// turned into a tool error is the same kind, and the client receives it. For 2026-07-28 and
// 2025-11-25 go-sdk clients.
func TestInterceptorMutatedKind(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	var mode atomic.Value
	mode.Store("")
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "kind", Type: intercept.TypeMutation, Handle: intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
			f := kindMutations[mode.Load().(string)]
			var r map[string]any
			if f == nil || json.Unmarshal(p, &r) != nil {
				return nil
			}
			f(r)
			for k, v := range r {
				if v == nil {
					delete(r, k)
				}
			}
			out, _ := json.Marshal(r)
			return out
		})},
	})
	// The same mutator over add, fail-open: a refused mutation is not applied, and the
	// backend's result goes through.
	open := interceptorEntry("kind-open", ics.URL(), intercept.TypeMutation, []string{"add"}, "response")
	open.Interceptor, open.FailOpen = "kind", true
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Interceptors = []InterceptorConfig{
			interceptorEntry("kind", ics.URL(), intercept.TypeMutation, []string{"ask_name", "echo"}, "response"), open,
		}
	}, alpha)
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			asked := 0
			cs := connectEra(t, gw, era, mcptest.WithElicitation(func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked++
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			}))
			for _, tt := range []struct {
				mode, tool string
				text       string // the result's text; "" for the result withheld
			}{
				{"", "ask_name", "Hello, Ada"},
				{"variant", "ask_name", ""},
				{"garbage", "ask_name", ""},
				{"complete", "ask_name", ""},
				{"forge", "echo", ""},
				{"task", "echo", ""},
				{"forge", "add", "5"},
				{"error", "echo", "turned"},
			} {
				mode.Store(tt.mode)
				asked = 0
				args := map[string]any{}
				switch tt.tool {
				case "echo":
					args["text"] = "hi"
				case "add":
					args["a"], args["b"] = 2, 3
				}
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__" + tt.tool, Arguments: args})
				switch {
				case tt.text == "":
					if !couldNotDecide(err) || asked != 0 {
						t.Errorf("%s: %v (asked %d), want the result withheld", tt.mode, err, asked)
					}
				case err != nil:
					t.Errorf("%s: %v", tt.mode, err)
				case mcptest.ResultText(res) != tt.text || res.IsError != (tt.mode == "error"):
					t.Errorf("%s: %q (error %v), want %q", tt.mode, mcptest.ResultText(res), res.IsError, tt.text)
				}
			}
		})
	}
}
