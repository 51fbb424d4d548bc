package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestRedactedCallConfirmedAndCorrelated: a call whose arguments a guardrail redacts and a person
// must confirm is confirmed and forwarded redacted, and the denial handle of its confirmation
// request is the client's call: the client's retry, which sends its own (unredacted) arguments
// again, is tied to it in the log (verified), as for a call nothing redacted. The backend gets the
// redacted text once, and the secret is in no log line.
func TestRedactedCallConfirmedAndCorrelated(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Server.DraftErrors = []string{mcphttp.DraftDenials}
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "form", Upstream: "alpha", Tools: []string{"echo"}, Confirm: authz.ConfirmForm}}
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "secrets", Tools: []string{"echo"},
			Arguments: guardrails.DirectionConfig{Secrets: "redact"}}}}
	}, alpha)
	defer stop()
	u := "http://" + gw.MCP + "/mcp"
	tok := mint(t, iss, devissuer.Claims{"sub": "redacted", "scope": "tools:use"})
	args := `{"text":"key ` + railAWSKey + `"}`
	ask := modernCall(t, u, tok, capsForm, "alpha__echo", args, "")
	handle, _ := json.Marshal(handleOf(t, ask))
	if strings.Contains(ask.Msg, railAWSKey) {
		t.Errorf("the confirmation request shows the redacted value: %s", ask.Msg)
	}
	before := len(logs.String())
	caps := capsForm + `,"io.modelcontextprotocol/authorization-context-id":` + string(handle)
	done := modernCall(t, u, tok, caps, "alpha__echo", args, `,"inputResponses":{"io.mcp-gateway/confirm":{"action":"accept","content":{"approve":true}}},"requestState":"`+stateOf(t, ask)+`"`)
	if line := firstLog(t, logs, before, "authorization context echoed"); line["verified"] != true {
		t.Errorf("the retry of a redacted call: %v, want verified", line)
	}
	calls := alpha.RequestsOf("tools/call")
	if len(calls) != 1 || strings.Contains(string(calls[0].Body), railAWSKey) || !strings.Contains(done.Msg, "key ") {
		t.Fatalf("the confirmed call: %s; the backend received %d calls: %v", done.Msg, len(calls), calls)
	}
	if strings.Contains(logs.String(), railAWSKey) {
		t.Error("the secret is in the log")
	}
}
