package gateway

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestInterceptorMutationHeldToBodyLimit: a request mutation is held to the size a client's
// request may have (server.maxBodyBytes), as to the decoder's other limits: one that grows the
// call past it is a failure of the mutator (fail-closed: the call is refused, the backend
// receives nothing), whether it grows the arguments or the client's own _meta; one within it is
// forwarded. In both eras.
func TestInterceptorMutationHeldToBodyLimit(t *testing.T) {
	const limit = 64 << 10
	alpha := mcptest.StartServer(t, "alpha")
	grow := rewrites(map[string]string{
		`"text":"grow"`:      `"text":"` + strings.Repeat("x", limit) + `"`,
		`"text":"grow-meta"`: `"text":"m","_meta":{"com.example/pad":"` + strings.Repeat("x", limit) + `"}`,
		`"text":"a little"`:  `"text":"` + strings.Repeat("y", limit/2) + `"`,
	})
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "grow", Type: intercept.TypeMutation, Handle: grow}})
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Server.MaxBodyBytes = limit
		c.Interceptors = []InterceptorConfig{interceptorEntry("grow", ics.URL(), intercept.TypeMutation, []string{"echo"}, "request")}
	}, alpha)
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			cs := connectEra(t, gw, era)
			alpha.Reset()
			for _, text := range []string{"grow", "grow-meta"} {
				_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": text}})
				if !couldNotDecide(err) {
					t.Errorf("a mutation past the body limit (%s): %v", text, err)
				}
			}
			if n := len(alpha.RequestsOf("tools/call")); n != 0 {
				t.Fatalf("the backend received %d calls grown past the body limit", n)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "a little"}})
			if err != nil || res.IsError || len(mcptest.ResultText(res)) != limit/2 {
				t.Fatalf("a mutation within the limit: %v", err)
			}
		})
	}
}

// TestInterceptorFailureLinesQuoteNoContent: an interceptor's answer the gateway refuses because
// its JSON repeats a member name (a webhook's answer, or a mutation's payload from an
// Interceptor Server) is a failure whose warning names the interceptor and the failure, never
// the member name, which is the call's content: a map argument's key can be a credential.
func TestInterceptorFailureLinesQuoteNoContent(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	dup := replaceIn(`"text":"dup"`, `"text":"x","env":{"`+railAWSKey+`":1,"`+railAWSKey+`":2}`)
	folded := replaceIn(`"text":"fold"`, `"text":"x","env":{"`+railAWSKey+`":1,"`+strings.ToLower(railAWSKey)+`":2}`)
	ics := []intercepttest.Interceptor{{Name: "dup", Type: intercept.TypeMutation, Handle: dup},
		{Name: "fold", Type: intercept.TypeMutation, Handle: folded}}
	hook, server := intercepttest.StartWebhook(t, ics), intercepttest.Start(t, ics)
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		viaHook := interceptorEntry("dup", hook.URL(), intercept.TypeMutation, []string{"echo"}, "request")
		viaHook.Webhook = true
		c.Interceptors = []InterceptorConfig{viaHook,
			interceptorEntry("fold", server.URL(), intercept.TypeMutation, []string{"echo"}, "request")}
	}, alpha)
	defer stop()
	cs := connectEra(t, gw, "2026-07-28")
	for _, text := range []string{"dup", "fold"} {
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": text}}); !couldNotDecide(err) {
			t.Errorf("%s: %v", text, err)
		}
	}
	stop()
	out := logs.String()
	if strings.Count(out, `"msg":"interceptor failed"`) != 2 {
		t.Errorf("want two failures logged:\n%s", out)
	}
	if i := strings.Index(strings.ToLower(out), strings.ToLower(railAWSKey)); i >= 0 {
		t.Error("a failure line quotes a member name:", out[max(0, i-300):min(len(out), i+60)])
	}
}
