package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestInterceptedCallCorrelated: the denial handle (authorizationContextId) of a confirmation
// request for a call an interceptor changed is the client's call, not the mutation: the client's
// retry, which sends its own name and arguments again, is tied to it in the log (verified), once,
// whether the mutation changed the arguments or renamed the call into another tool. What the
// backend receives is the mutation.
func TestInterceptedCallCorrelated(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	mutate := rewrites(map[string]string{
		`"text":"pay bob"`: `"text":"pay alice"`,
		`"alpha__echo","arguments":{"text":"to-add"}`: `"alpha__add","arguments":{"a":2,"b":3}`,
	})
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "fix", Type: intercept.TypeMutation, Handle: mutate}})
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Server.DraftErrors = []string{mcphttp.DraftDenials}
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "form", Upstream: "alpha", Tools: []string{"echo", "add"}, Confirm: authz.ConfirmForm}}
		c.Interceptors = []InterceptorConfig{interceptorEntry("fix", ics.URL(), intercept.TypeMutation, []string{"echo"}, "request")}
	}, alpha)
	u := "http://" + gw.MCP + "/mcp"
	tok := mint(t, iss, devissuer.Claims{"sub": "intercepted", "scope": "tools:use"})
	cases := []struct{ args, forwarded string }{
		{`{"text":"pay bob"}`, `"pay alice"`},
		{`{"text":"to-add"}`, `"name":"add"`},
	}
	for _, c := range cases {
		ask := modernCall(t, u, tok, capsForm, "alpha__echo", c.args, "")
		handle, _ := json.Marshal(handleOf(t, ask))
		caps := capsForm + `,"io.modelcontextprotocol/authorization-context-id":` + string(handle)
		done := modernCall(t, u, tok, caps, "alpha__echo", c.args, `,"inputResponses":{"io.mcp-gateway/confirm":{"action":"accept","content":{"approve":true}}},"requestState":"`+stateOf(t, ask)+`"`)
		if body := lastCallBody(alpha); !strings.Contains(body, c.forwarded) || strings.Contains(done.Msg, `"isError":true`) {
			t.Fatalf("%s: the confirmed call: %s; the backend received %s", c.args, done.Msg, body)
		}
	}
	stop()
	var echoed []logLine
	for _, l := range logLines(t, logs.String()) {
		if l.str("msg") == "authorization context echoed" {
			echoed = append(echoed, l)
		}
	}
	if len(echoed) != len(cases) {
		t.Fatalf("%d correlation lines for %d retries: %v", len(echoed), len(cases), echoed)
	}
	for i, l := range echoed {
		if l["verified"] != true {
			t.Errorf("the retry of %s: %v, want verified", cases[i].args, l)
		}
	}
}
