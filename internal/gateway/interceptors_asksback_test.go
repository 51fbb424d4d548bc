//lint:file-ignore SA1019 pre-2026 clients and servers still use sampling, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// askingInterceptor is a 2025-11-25 Interceptor Server's validator that, while it decides,
// sends the gateway an elicitation, a sampling request and roots/list on its session, reports
// what each brought back on got (the answer, or "error"), and allows the call.
func askingInterceptor(got chan<- string) intercepttest.Handler {
	return func(ctx context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
		ss := intercepttest.SessionOf(ctx)
		report := func(what string, answer any, err error) {
			if err != nil {
				got <- inv.Phase + " " + what + ": error"
				return
			}
			got <- fmt.Sprintf("%s %s: %v", inv.Phase, what, answer)
		}
		el, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "the interceptor asks", RequestedSchema: &jsonschema.Schema{Type: "object"}})
		report("elicit", el, err)
		sm, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "the interceptor samples"}}}})
		report("sample", sm, err)
		rs, err := ss.ListRoots(ctx, nil)
		report("roots", rs, err)
		return intercepttest.Allow()(ctx, inv)
	}
}

// TestInterceptorAsksNoClient: an Interceptor Server is the gateway's own peer, and asks the
// caller nothing. A 2025-11-25 Interceptor Server that sends the gateway an elicitation, a
// sampling request or roots/list while it decides a pre-2026 client's call (the gateway's session
// declares those capabilities, for the backends' calls) is answered with an error, in both
// phases: its request never reaches the client, which would show the person a form the
// operator's policy engine wrote, hand it the model, or tell it the client's roots, none of
// which the operator's claims allow it. Before, the pre-2026 edge's route to its client, meant
// for the backend's requests during the call, carried the interceptor's too.
func TestInterceptorAsksNoClient(t *testing.T) {
	got := make(chan string, 64)
	alpha := mcptest.StartServer(t, "alpha")
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "asker", Type: intercept.TypeValidation, Handle: askingInterceptor(got)},
	}, intercepttest.Legacy())
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Interceptors = []InterceptorConfig{interceptorEntry("asker", ics.URL(), intercept.TypeValidation, []string{"echo"})}
	}, alpha)
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(version, func(t *testing.T) {
			asked := make(chan string, 8)
			answer := "Ada"
			cs := connectAsked(t, gw, version, &answer, asked, mcptest.WithRoots(&mcp.Root{URI: "file:///home/ann-private"}))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError {
				t.Fatalf("the call: %v %+v", err, res)
			}
			want := []string{"request elicit: error", "request sample: error", "request roots: error",
				"response elicit: error", "response sample: error", "response roots: error"}
			for _, w := range want {
				if g := <-got; g != w {
					t.Errorf("the interceptor's own request: %q, want %q", g, w)
				}
			}
			select {
			case a := <-asked:
				t.Errorf("the client was asked %q by the interceptor", a)
			default:
			}
		})
	}
}

// TestListAsksNoClient: what a pre-2026 backend asks while it answers one of the gateway's own
// requests (here the tools/list page the gateway fetches for a pre-2026 client's list) is
// answered with an error: the request is the gateway's, not a call of the client's, and nothing
// would check what the backend asks on the way. Before, the backend read the client's roots.
func TestListAsksNoClient(t *testing.T) {
	got := make(chan string, 8)
	old := mcptest.StartLegacyServer(t, "old")
	old.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && method == "tools/list" {
				res, err := ss.ListRoots(ctx, nil)
				if err != nil {
					got <- "error"
				} else {
					got <- fmt.Sprint(len(res.Roots), " roots")
				}
			}
			return next(ctx, method, req)
		}
	})
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Upstreams[0].Protocol = "2025-11-25"
	}, old)
	asked := make(chan string, 8)
	answer := ""
	cs := connectAsked(t, gw, "2025-11-25", &answer, asked, mcptest.WithRoots(&mcp.Root{URI: "file:///home/ann-private"}))
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if g := <-got; g != "error" {
		t.Errorf("the backend asked the client for its roots during the gateway's list and got %s", g)
	}
}
