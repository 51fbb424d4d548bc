package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

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
