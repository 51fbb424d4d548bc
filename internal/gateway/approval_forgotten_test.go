package gateway

import (
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestApprovalAskedAfreshWhenTheStoreForgets: a call waiting for the approval page whose
// records the store lost (Redis restarted empty) is asked afresh on its retry, with a new page
// the user can decide, whether the client answered the URL elicitation or not, rather than
// sent again and again to its old page, which no longer knows the call, until its requestState
// expires. The new page's approval runs the call once; the old state never runs it.
func TestApprovalAskedAfreshWhenTheStoreForgets(t *testing.T) {
	op := realop.Start(t, realop.Options{})
	rs := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	rule := authz.RuleConfig{ID: "echo-approval", Upstream: "alpha", Tools: []string{mcptest.ToolEcho}, Confirm: authz.ConfirmURL}
	gw, tok, base := startConfirmURLGateway(t, op, rule, func(c *Config) { c.Redis.URL = rs.URL() }, alpha)
	const args = `{"text":"ship it"}`
	pageOf := func(r urlAsk) string { return r.Result.InputRequests["io.mcp-gateway/confirm"].Params.URL }

	_, first := callWithMeta(t, gw, tok, urlElicitMeta, "alpha__echo", args, "")
	if first.Result.ResultType != "input_required" || pageOf(first) == "" {
		t.Fatalf("approval asked: %+v", first)
	}
	state := first.Result.RequestState
	rs.Restart()
	waitReady(t, gw)

	var fresh urlAsk
	for _, retry := range []string{
		`,"requestState":"` + state + `"`,
		`,"inputResponses":{"io.mcp-gateway/confirm":{"action":"accept"}},"requestState":"` + state + `"`,
	} {
		_, fresh = callWithMeta(t, gw, tok, urlElicitMeta, "alpha__echo", args, retry)
		if fresh.Result.ResultType != "input_required" || pageOf(fresh) == "" || pageOf(fresh) == pageOf(first) ||
			fresh.Result.RequestState == state {
			t.Fatalf("retry of a call whose records the store lost: %+v, want asked afresh with a new page, not %s again",
				fresh, pageOf(first))
		}
	}
	c, body := signInToApprovalPage(t, pageOf(fresh), op.Username())
	decideOnPage(t, c, base, pageOf(fresh), body, "approve")
	accept := `,"inputResponses":{"io.mcp-gateway/confirm":{"action":"accept"}},"requestState":"`
	_, done := callWithMeta(t, gw, tok, urlElicitMeta, "alpha__echo", args, accept+fresh.Result.RequestState+`"`)
	if done.Error != nil || done.Result.IsError || len(done.Result.Content) == 0 || done.Result.Content[0].Text != "ship it" {
		t.Errorf("retry approved on the new page: %+v", done)
	}
	if _, again := callWithMeta(t, gw, tok, urlElicitMeta, "alpha__echo", args, accept+fresh.Result.RequestState+`"`); again.Error == nil {
		t.Errorf("the approved retry replayed: %+v, want refused", again)
	}
	if n := toolCalls(alpha); n != 1 {
		t.Errorf("backend received %d calls, want the approved one once", n)
	}
}
