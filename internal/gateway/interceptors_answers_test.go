package gateway

import (
	"context"
	"strings"
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
