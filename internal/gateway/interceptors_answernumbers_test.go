package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestInterceptorsLegacyAnswersReadAlike: a pre-2026 client's answer to a pre-2026 backend's
// request mid-call crosses the call's request-phase interceptors as a 2026-07-28 retry's
// inputResponses do, and is held to the same rule: an answer JSON parsers read as different
// values (here a number beyond 2^53, which a validator decoding into doubles reads as its
// neighbour, or a fraction no double says) is put to no interceptor; the backend gets an error
// in its place and the call fails with an error saying why, its result withheld. Before, the
// validator was asked and allowed it, and the call's result was released.
func TestInterceptorsLegacyAnswersReadAlike(t *testing.T) {
	got := make(chan string, 4)
	old := mcptest.StartLegacyServer(t, "old", mcptest.WithoutDefaults(),
		mcptest.WithTool(&mcp.Tool{Name: "asks", InputSchema: &jsonschema.Schema{Type: "object"}}, askTool(got)))
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "answers", Type: intercept.TypeValidation, Handle: intercepttest.Allow()}})
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Upstreams[0].Protocol = "2025-11-25"
		c.Interceptors = []InterceptorConfig{asksEntry("answers", ics.URL(), intercept.TypeValidation, "request")}
	}, old)
	for _, answer := range []any{json.Number("9007199254740993"), json.Number("0.10000000000000001")} {
		cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion("2025-11-25"),
			mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": answer}}, nil
			}))
		ics.Reset()
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "old__asks", Arguments: map[string]any{"what": "elicit", "text": "your id?"}})
		if g := reported(t, got); !strings.HasPrefix(g, "error: ") {
			t.Errorf("%v: the backend got %q, want an error", answer, g)
		}
		if err == nil || !strings.Contains(err.Error(), "cannot be put to the gateway's interceptors") {
			t.Errorf("%v: %v, want the result withheld for an answer parsers read differently", answer, err)
		}
		if n := len(askInvocations(ics, "request", "inputResponses")); n != 0 {
			t.Errorf("%v: the interceptor was shown the answer %d times", answer, n)
		}
	}
}
