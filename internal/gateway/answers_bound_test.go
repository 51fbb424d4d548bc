package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestAnsweredRoundsBoundedPerCaller: every answered round leaves a replay record in the store
// until its requestState expires, so one caller may answer only mrtr.maxAnswersPerCaller
// rounds per mrtr.ttl, on one replica's memory store and in Redis alike. Past the budget a
// retry is refused with 429 -32012 and Retry-After, nothing reaches the backend, and another
// caller's confirmations are served meanwhile.
func TestAnsweredRoundsBoundedPerCaller(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	rs := testredis.Start(t)
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "redis"}[shared]
		t.Run(name, func(t *testing.T) {
			gw := startTestGateway(t, func(c *Config) {
				trustIssuers(c, iss)
				c.MRTR.Keys = testKeys
				c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "echo-confirm", Upstream: "alpha", Tools: []string{"echo"},
					AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm}}
				c.MRTR.MaxAnswersPerCaller = 2
				if shared {
					c.Redis.URL = rs.URL()
				}
			}, alpha)
			alice, bob := mintFor(t, iss, "alice"), mintFor(t, iss, "bob")
			alpha.Reset()
			for i := range 2 {
				_, first := rawCall(t, gw, alice, "alpha__echo", `{"text":"x"}`, "")
				if _, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"x"}`, approve(first.Result.RequestState)); r.Error != nil || r.Result.IsError {
					t.Fatalf("alice's answer %d within the budget: %+v", i+1, r)
				}
			}
			_, first := rawCall(t, gw, alice, "alpha__echo", `{"text":"x"}`, "")
			h := modernHeaders("tools/call", "alpha__echo")
			h.Set("Authorization", "Bearer "+alice)
			status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+
				elicitMeta+`,"name":"alpha__echo","arguments":{"text":"x"}`+approve(first.Result.RequestState)+`}}`)
			if status != http.StatusTooManyRequests || !strings.Contains(body, "-32012") ||
				!strings.Contains(body, "Too many rounds answered by this caller") || hdr.Get("Retry-After") == "" {
				t.Fatalf("alice's third answer: %d, Retry-After %q: %.300s", status, hdr.Get("Retry-After"), body)
			}
			if n := len(alpha.Forwarded()); n != 2 {
				t.Errorf("backend received %d calls, want the 2 within alice's budget", n)
			}
			// Bob is confirmed by a real client while alice is refused.
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(bob), mcptest.WithElicitation(
				func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
				}))
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "bob"}})
			if err != nil || res.IsError || mcptest.ResultText(res) != "bob" {
				t.Fatalf("bob's confirmed call while alice is over her budget: %v %+v", err, res)
			}
		})
	}
}
