package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestApprovalPagePreModernRevisions: what a pre-2026 client of each revision is asked for a
// confirm: url call. A 2025-11-25 client that declared URL mode is sent to the page; one of
// 2025-06-18, whose revision has no URL mode (whatever its elicitation object holds), or of
// 2025-11-25 without URL mode, gets a failed call saying what it lacks, nothing asked, unless
// the rule falls back to the client's form, which any client with elicitation then gets: a
// 2025-06-18 client declaring elicitation as {"url":{}} too (before, it was read as having no
// elicitation at all and told it had not declared any). A 2025-03-26 client, without
// elicitation, is refused either way. The backend is never reached (every client declines).
func TestApprovalPagePreModernRevisions(t *testing.T) {
	op := realop.Start(t, realop.Options{})
	alpha := mcptest.StartServer(t, "alpha")
	modeless := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
	urlOnly := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}
	formOnly := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}
	const (
		noURL0618 = "requires URL-mode elicitation, which MCP 2025-06-18 (the version this client speaks) does not have"
		noURL     = "requires URL-mode elicitation, which this client did not declare"
		none0326  = "requires elicitation, which MCP 2025-03-26 (the version this client speaks) does not have"
	)
	for _, fallback := range []string{"", authz.FallbackClientForm} {
		rule := authz.RuleConfig{ID: "echo-approval", Upstream: "alpha", Tools: []string{mcptest.ToolEcho}, Confirm: authz.ConfirmURL,
			ConfirmFallback: fallback}
		gw, tok, base := startConfirmURLGateway(t, op, rule, nil, alpha)
		for _, tt := range []struct {
			version string
			caps    *mcp.ClientCapabilities
			// mode is the elicitation the client is sent ("form", "url"), or "" for none, and
			// then refused is what the failed call says.
			mode, refused string
		}{
			{"2025-11-25", urlOnly, "url", ""},
			{"2025-11-25", formOnly, pick(fallback, "form", ""), pick(fallback, "", noURL)},
			{"2025-06-18", modeless, pick(fallback, "form", ""), pick(fallback, "", noURL0618)},
			{"2025-06-18", urlOnly, pick(fallback, "form", ""), pick(fallback, "", noURL0618)},
			{"2025-03-26", &mcp.ClientCapabilities{}, "", none0326},
		} {
			var mu sync.Mutex
			var asked []*mcp.ElicitParams
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(tok), mcptest.WithProtocolVersion(tt.version),
				mcptest.WithCapabilities(tt.caps),
				mcptest.WithElicitation(func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req.Params)
					return &mcp.ElicitResult{Action: "decline"}, nil
				}))
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "x"}})
			name := "fallback " + pick(fallback, fallback, "none") + ", " + tt.version
			if err != nil || !res.IsError {
				t.Errorf("%s %+v: %v %+v, want a failed call", name, tt.caps.Elicitation, err, res)
				continue
			}
			text := mcptest.ResultText(res)
			mu.Lock()
			switch {
			case tt.mode == "" && (len(asked) != 0 || !strings.Contains(text, "The call to alpha__echo "+tt.refused)):
				t.Errorf("%s %+v: asked %d times, %q; want nothing asked and %q", name, tt.caps.Elicitation, len(asked), text, tt.refused)
			case tt.mode != "" && len(asked) != 1:
				t.Errorf("%s %+v: asked %d times (%q), want one %s elicitation", name, tt.caps.Elicitation, len(asked), text, tt.mode)
			case tt.mode == "url" && (asked[0].Mode != "url" || !strings.HasPrefix(asked[0].URL, base+"/approval/c/")):
				t.Errorf("%s: sent %+v, want the approval page", name, asked[0])
			case tt.mode == "form" && (asked[0].Mode == "url" || asked[0].URL != "" || asked[0].RequestedSchema == nil):
				t.Errorf("%s %+v: sent %+v, want the form confirmation", name, tt.caps.Elicitation, asked[0])
			}
			mu.Unlock()
		}
	}
	if n := toolCalls(alpha); n != 0 {
		t.Errorf("backend received %d calls", n)
	}
}

// pick is yes when s is set, else no.
func pick(s, yes, no string) string {
	if s != "" {
		return yes
	}
	return no
}
