package gateway

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsEveryParamsMember: stage guardrails reads a call's params again only when they
// hold a member besides the ones it leaves alone (the name, the arguments, the requestState and
// the protocol's _meta members); each kind of other member that holds a credential is still
// refused before it reaches the backend: one the gateway does not read, a cursor, a ref, a
// uri, inputResponses and a _meta member of the client's. Between them, clean calls and a call
// whose result is redacted: what the guardrails keep of one request (reused by the next) carries
// nothing over, so the clean calls come back as the backend answered, unannotated.
func TestGuardrailsEveryParamsMember(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "params", Tools: []string{"*"},
			Arguments: guardrails.DirectionConfig{Secrets: "block"}, Results: guardrails.DirectionConfig{PII: "redact"}}}}
	}, alpha)
	url := "http://" + gw.MCP + "/mcp"
	call := func(extra, text string) *mcptest.Response {
		t.Helper()
		return mcptest.Do(t, "POST", url, mcptest.RequestHeaders("tools/call", "alpha__echo"),
			mcptest.Body("tools/call", `,"name":"alpha__echo","arguments":{"text":"`+text+`"}`+extra))
	}
	clean := func(what string) {
		t.Helper()
		r := call("", "hi")
		if res := string(r.RPC.Result); r.Status != 200 || !strings.Contains(res, `"text":"hi"`) ||
			strings.Contains(res, "isError") || strings.Contains(res, guardrails.MetaKey) {
			t.Errorf("a clean call after %s: %d %s", what, r.Status, r.Body)
		}
	}
	clean("none")
	for what, member := range map[string]string{
		"a member the gateway does not read": `,"x-note":"` + railAWSKey + `"`,
		"a cursor":                           `,"cursor":"` + railAWSKey + `"`,
		"a ref":                              `,"ref":{"type":"ref/prompt","name":"` + railAWSKey + `"}`,
		"a uri":                              `,"uri":"` + railAWSKey + `"`,
		"inputResponses":                     `,"inputResponses":{"a":{"action":"accept","content":{"k":"` + railAWSKey + `"}}}`,
	} {
		alpha.Reset()
		r := call(member, "hi")
		if res := string(r.RPC.Result); r.Status != 200 || !strings.Contains(res, `"isError":true`) ||
			!strings.Contains(res, "Refused by guardrail") || strings.Contains(res, railAWSKey) {
			t.Errorf("%s: %d %s", what, r.Status, r.Body)
		}
		if n := len(alpha.RequestsOf("tools/call")); n != 0 {
			t.Errorf("%s: the backend got %d calls", what, n)
		}
		clean(what)
	}
	// The client's own _meta member, beside the protocol's.
	r := mcptest.Do(t, "POST", url, mcptest.RequestHeaders("tools/call", "alpha__echo"),
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
			`"io.modelcontextprotocol/clientCapabilities":{},"x.example/note":"`+railAWSKey+`"},"name":"alpha__echo","arguments":{"text":"hi"}}}`)
	if res := string(r.RPC.Result); !strings.Contains(res, `"isError":true`) || strings.Contains(res, railAWSKey) {
		t.Errorf("a _meta member of the client's: %d %s", r.Status, r.Body)
	}
	clean("a _meta member")
	// A result redacted and annotated, then a clean one.
	r = call("", railEmail)
	if res := string(r.RPC.Result); strings.Contains(res, railEmail) || !strings.Contains(res, "[REDACTED:email]") ||
		!strings.Contains(res, guardrails.MetaKey) {
		t.Errorf("the redacted result: %d %s", r.Status, r.Body)
	}
	clean("a redacted result")
}
