package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestInterceptorSeesTheAnswers: an MRTR retry carries in inputResponses what a person typed
// into the backend's form, for the backend; a request-phase interceptor that checks what the
// backend receives sees it (and refuses here), in both eras, while a mutation that would
// change it is refused: the answers, the gateway's own confirmations among them, stay the
// client's.
func TestInterceptorSeesTheAnswers(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "dlp", Type: intercept.TypeValidation, Handle: intercepttest.DenyIf("ann@example.com", "an e-mail address")},
		{Name: "forge", Type: intercept.TypeMutation, Handle: replaceIn("Ada", "Eve")},
	})
	gw := startTestGateway(t, func(c *Config) {
		c.Legacy.Enabled = true
		c.Interceptors = []InterceptorConfig{
			interceptorEntry("dlp", ics.URL(), intercept.TypeValidation, []string{"ask_name"}, "request"),
			interceptorEntry("forge", ics.URL(), intercept.TypeMutation, []string{"ask_name"}, "request"),
		}
	}, alpha)
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			answer := "ann@example.com"
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(era),
				mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": answer}}, nil
				}))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__ask_name", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if got := mcptest.ResultText(res); !res.IsError || !strings.Contains(got, "interceptor dlp") || strings.Contains(got, "Hello") {
				t.Errorf("an answer the interceptor refuses: %v %q", res.IsError, got)
			}
			answer = "Ada"
			_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__ask_name", Arguments: map[string]any{}})
			if !couldNotDecide(err) {
				t.Errorf("a mutation of the answers: %v", err)
			}
		})
	}
}

// TestInterceptorsSeeTheForwardedMeta: the client's _meta reaches the backend as the client
// wrote it (its own members can change what the backend does, a vendor's "dryRun" say), so an
// interceptor that checks what the backend receives is shown it: a validator refuses a call for
// what the _meta holds, a mutator's change of the client's own member is what the backend
// receives, and a mutation that changes a member the gateway reads itself (the progress token
// here) is a failure, so nothing is forwarded; for clients of both eras.
func TestInterceptorsSeeTheForwardedMeta(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "guard", Type: intercept.TypeValidation, Handle: intercepttest.DenyIf("meta-forbidden", "no")},
		{Name: "redact", Type: intercept.TypeMutation, Handle: intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
			s := string(p)
			switch {
			case strings.Contains(s, "meta-secret-123"):
				return json.RawMessage(strings.ReplaceAll(s, "meta-secret-123", "[redacted]"))
			case strings.Contains(s, "retoken"):
				return json.RawMessage(strings.ReplaceAll(s, `"progressToken":"p"`, `"progressToken":"q"`))
			}
			return nil
		})},
	})
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Interceptors = []InterceptorConfig{
			interceptorEntry("guard", ics.URL(), intercept.TypeValidation, []string{"echo"}, "request"),
			interceptorEntry("redact", ics.URL(), intercept.TypeMutation, []string{"echo"}, "request"),
		}
	}, alpha)
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			cs := connectEra(t, gw, era)
			call := func(text, note string) (*mcp.CallToolResult, error) {
				return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo",
					Arguments: map[string]any{"text": text}, Meta: mcp.Meta{"progressToken": "p", "x.example/note": note}})
			}
			alpha.Reset()
			res, err := call("hello", "meta-forbidden")
			if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "refused by the gateway's interceptor guard") {
				t.Fatalf("a call whose _meta the validator refuses: %v %+v", err, res)
			}
			if n := toolCalls(alpha); n != 0 {
				t.Fatalf("the backend received %d refused calls: %s", n, lastCallBody(alpha))
			}
			res, err = call("hello", "keep meta-secret-123")
			if err != nil || res.IsError {
				t.Fatalf("a call whose _meta the mutator redacts: %v %+v", err, res)
			}
			if b := lastCallBody(alpha); !strings.Contains(b, "keep [redacted]") || strings.Contains(b, "meta-secret-123") {
				t.Fatalf("the backend received %s", b)
			}
			res, err = call("retoken", "n")
			if err == nil && !res.IsError {
				t.Fatalf("a mutation of the progress token was forwarded: %+v", res)
			}
			if n := toolCalls(alpha); n != 1 {
				t.Fatalf("the backend received %d calls, want the redacted one only: %s", n, lastCallBody(alpha))
			}
		})
	}
}

// TestValidatorsSeeWhatAMutationLeaves: a request mutation may leave out the _meta (and a
// retry's answers), which are then forwarded as it was shown them; the validators after it are
// shown the call as forwarded, those members included, and so is the next mutator; an earlier
// mutator's change of the client's own member survives a later mutation without _meta. A validator
// refusing what the client's own _meta member holds refuses the call whether a mutator before
// it gave the _meta back or not; nothing reaches the backend. The validators used to see the
// mutation as it came, without the _meta the backend then received.
func TestValidatorsSeeWhatAMutationLeaves(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	// Rewrites the arguments and answers without the _meta, as the contract allows.
	rewrite := intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
		var m struct {
			Method string                     `json:"method"`
			Params map[string]json.RawMessage `json:"params"`
		}
		if json.Unmarshal(p, &m) != nil || !strings.Contains(string(m.Params["arguments"]), "bob") {
			return nil
		}
		delete(m.Params, "_meta")
		m.Params["arguments"] = json.RawMessage(strings.ReplaceAll(string(m.Params["arguments"]), "bob", "alice"))
		out, _ := json.Marshal(m)
		return out
	})
	var seen atomic.Value
	record := intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
		seen.Store(string(p))
		return nil
	})
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "scrub", Type: intercept.TypeMutation, Handle: replaceIn("meta-secret", "[scrubbed]")},
		{Name: "rewrite", Type: intercept.TypeMutation, Handle: rewrite},
		{Name: "record", Type: intercept.TypeMutation, Handle: record},
		{Name: "guard", Type: intercept.TypeValidation, Handle: intercepttest.DenyIf("meta-forbidden", "no")},
	})
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		scrub := interceptorEntry("scrub", ics.URL(), intercept.TypeMutation, []string{"echo"}, "request")
		scrub.Priority = -2
		first := interceptorEntry("rewrite", ics.URL(), intercept.TypeMutation, []string{"echo"}, "request")
		first.Priority = -1
		c.Interceptors = []InterceptorConfig{scrub, first,
			interceptorEntry("record", ics.URL(), intercept.TypeMutation, []string{"echo"}, "request"),
			interceptorEntry("guard", ics.URL(), intercept.TypeValidation, []string{"echo"}, "request")}
	}, alpha)
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			cs := connectEra(t, gw, era)
			alpha.Reset()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo",
				Arguments: map[string]any{"text": "pay bob"}, Meta: mcp.Meta{"x.example/note": "meta-forbidden"}})
			if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "refused by the gateway's interceptor guard") {
				t.Errorf("a call whose _meta the validator refuses, after a mutation without it: %v %+v", err, res)
			}
			if n := toolCalls(alpha); n != 0 {
				t.Errorf("the backend received %s", lastCallBody(alpha))
			}
			if s, _ := seen.Load().(string); !strings.Contains(s, "pay alice") || !strings.Contains(s, "meta-forbidden") {
				t.Errorf("the next mutator was shown %s", s)
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo",
				Arguments: map[string]any{"text": "pay bob"}, Meta: mcp.Meta{"x.example/note": "fine"}})
			if err != nil || res.IsError || mcptest.ResultText(res) != "pay alice" || !strings.Contains(lastCallBody(alpha), `"x.example/note":"fine"`) {
				t.Errorf("an allowed call: %v %+v; the backend received %s", err, res, lastCallBody(alpha))
			}
			// scrub changes the client's member, rewrite then leaves the _meta out: the
			// backend receives scrub's change, which is what guard was shown.
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo",
				Arguments: map[string]any{"text": "pay bob"}, Meta: mcp.Meta{"x.example/note": "meta-secret"}})
			if b := lastCallBody(alpha); err != nil || res.IsError || !strings.Contains(b, `"x.example/note":"[scrubbed]"`) || strings.Contains(b, "meta-secret") {
				t.Errorf("a call scrubbed, then rewritten without _meta: %v %+v; the backend received %s", err, res, b)
			}
		})
	}
}
