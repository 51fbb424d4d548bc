package gateway

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestApprovalURLNeverClientSatisfied: with `confirm: url` and no fallback, nothing a client can
// produce forwards the call, whatever capabilities it declares: not a form answer, not an
// answer in URL mode without the page's decision, and not a requestState the same user got
// under another rule (a token with more scopes whose rule asks for a form, or none) for the
// very same call and arguments. Only the page's approval forwards it.
func TestApprovalURLNeverClientSatisfied(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{
			// The same user's tokens with the admin scope confirm echo in the client, and call
			// ask_name without confirmation.
			{ID: "admin-form", Upstream: "alpha", Tools: []string{"echo"}, AllScopes: []string{"admin"}, Confirm: authz.ConfirmForm},
			{ID: "admin-ask", Upstream: "alpha", Tools: []string{"ask_name"}, AllScopes: []string{"admin"}},
			{ID: "page", Upstream: "alpha", Tools: []string{"echo", "ask_name"}, Confirm: authz.ConfirmURL},
		}
		c.Approval.ClientID = "gateway-approval"
	}, alpha)
	tok := mintFor(t, iss, "alice")
	admin := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use admin"})
	const args = `{"text":"x"}`
	// Whatever the client declares, the first call is refused or sent to the page, never to a form.
	for _, caps := range []string{`{}`, `{"elicitation":{}}`, `{"elicitation":{"form":{}}}`, `{"elicitation":{"url":{}}}`,
		`{"elicitation":{"form":{},"url":{}}}`, `{"elicitation":{"url":true}}`} {
		status, r := callWithMeta(t, gw, tok, metaDeclaring(caps), "alpha__echo", args, "")
		if p, ok := r.Result.InputRequests["io.mcp-gateway/confirm"]; ok && p.Params.Mode != "url" {
			t.Errorf("%s: asked in mode %q", caps, p.Params.Mode)
		}
		if r.Result.ResultType != "input_required" && (r.Error == nil || r.Error.Code != -32021) {
			t.Errorf("%s: %d %+v", caps, status, r)
		}
		// The page's state answered in the client, with form content: asked again.
		if r.Result.RequestState != "" {
			_, again := callWithMeta(t, gw, tok, metaDeclaring(caps), "alpha__echo", args, approve(r.Result.RequestState))
			if again.Result.ResultType != "input_required" {
				t.Errorf("%s: the client's own accept of the page's state: %+v", caps, again)
			}
		}
	}
	// A form confirmation of the same call, issued under the admin rule, presented with the
	// page rule's token, by a client declaring both modes both times (a state is bound to what
	// its client declared: another declaration would be refused before the rule is looked at).
	both := metaDeclaring(`{"elicitation":{"form":{},"url":{}}}`)
	_, form := callWithMeta(t, gw, admin, both, "alpha__echo", args, "")
	if form.Result.InputRequests["io.mcp-gateway/confirm"].Params.Mode != "form" {
		t.Fatalf("admin's form confirmation: %+v", form)
	}
	_, r := callWithMeta(t, gw, tok, both, "alpha__echo", args, approve(form.Result.RequestState))
	if r.Result.ResultType != "input_required" || r.Result.InputRequests["io.mcp-gateway/confirm"].Params.Mode != "url" {
		t.Errorf("a form confirmation under a confirm: url rule: %+v %+v", r, r.Error)
	}
	// A backend's own round trip, begun unconfirmed under the admin rule, continued with the page
	// rule's token.
	_, begun := callWithMeta(t, gw, admin, both, "alpha__ask_name", `{}`, "")
	if begun.Result.ResultType != "input_required" || begun.Result.RequestState == "" {
		t.Fatalf("ask_name under the admin rule: %+v", begun)
	}
	named := `,"inputResponses":{"name":{"action":"accept","content":{"name":"Eve"}}},"requestState":"` + begun.Result.RequestState + `"`
	_, r = callWithMeta(t, gw, tok, both, "alpha__ask_name", `{}`, named)
	if strings.Contains(strings.Join(textsOf(r), " "), "Hello") || r.Result.InputRequests["io.mcp-gateway/confirm"].Params.Mode != "url" {
		t.Errorf("a backend round trip without approval under a confirm: url rule: %+v", r)
	}
	if n := toolCalls(alpha); n != 1 {
		t.Errorf("backend received %d calls, want 1 (ask_name under the admin rule)", n)
	}
}

// textsOf returns the text contents of a result.
func textsOf(r urlAsk) []string {
	var out []string
	for _, c := range r.Result.Content {
		out = append(out, c.Text)
	}
	return out
}

// TestApprovalFallbackKeepsThePageForURLClients: `confirmFallback: clientForm` lets a form
// stand for the page only for a client that did not declare URL elicitation. A client that
// declares it is asked on the page, and a form confirmation of the same call it presents (got
// under another rule: a token whose rule asks for a form, as the policy before a reload would
// have) does not forward the call: it is asked on the page. A client declaring only form still
// gets the form and runs the call with it.
func TestApprovalFallbackKeepsThePageForURLClients(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "admin-form", Upstream: "alpha", Tools: []string{"echo"}, AllScopes: []string{"admin"}, Confirm: authz.ConfirmForm},
			{ID: "page", Upstream: "alpha", Tools: []string{"echo"}, Confirm: authz.ConfirmURL, ConfirmFallback: authz.FallbackClientForm},
		}
		c.Approval.ClientID = "gateway-approval"
	}, alpha)
	tok := mintFor(t, iss, "alice")
	admin := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use admin"})
	const args = `{"text":"x"}`
	// (A state is bound to what its client declared, so the client declares both modes both
	// times, as in TestApprovalURLNeverClientSatisfied.)
	for _, caps := range []string{`{"elicitation":{"form":{},"url":{}}}`} {
		meta := metaDeclaring(caps)
		_, form := callWithMeta(t, gw, admin, meta, "alpha__echo", args, "")
		if form.Result.InputRequests["io.mcp-gateway/confirm"].Params.Mode != "form" {
			t.Fatalf("%s: admin's form confirmation: %+v", caps, form)
		}
		_, r := callWithMeta(t, gw, tok, meta, "alpha__echo", args, approve(form.Result.RequestState))
		if r.Result.ResultType != "input_required" || r.Result.InputRequests["io.mcp-gateway/confirm"].Params.Mode != "url" {
			t.Errorf("%s: a form confirmation under a confirm: url rule with the client-form fallback: %+v %+v", caps, r, r.Error)
		}
	}
	if n := toolCalls(alpha); n != 0 {
		t.Fatalf("backend received %d calls, want none", n)
	}
	// The fallback itself: a client without URL elicitation confirms in its form.
	formOnly := metaDeclaring(`{"elicitation":{"form":{}}}`)
	_, ask := callWithMeta(t, gw, tok, formOnly, "alpha__echo", args, "")
	if ask.Result.InputRequests["io.mcp-gateway/confirm"].Params.Mode != "form" {
		t.Fatalf("fallback: %+v", ask)
	}
	if _, r := callWithMeta(t, gw, tok, formOnly, "alpha__echo", args, approve(ask.Result.RequestState)); r.Result.ResultType == "input_required" || toolCalls(alpha) != 1 {
		t.Errorf("the fallback's form answer: %+v, backend calls %d", r, toolCalls(alpha))
	}
}

// metaDeclaring is a 2026-07-28 request's _meta declaring the client capabilities caps.
func metaDeclaring(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}
