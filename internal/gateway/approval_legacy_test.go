package gateway

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestApprovalPageLegacyClientWaits: a 2025-11-25 client answers the URL elicitation of the
// approval page with accept as soon as its user is sent there, which is all that revision's
// accept says. The call waits for the decision on the page rather than sending the client the
// same page again: the client is asked once, an approval runs the call once, a denial ends it as
// a failed call that never reaches the backend. (Before, the client was asked again at once,
// round after round, and the call failed for want of rounds before the user could decide.)
func TestApprovalPageLegacyClientWaits(t *testing.T) {
	t.Parallel()
	op := realop.Start(t, realop.Options{})
	alpha := mcptest.StartServer(t, "alpha")
	gw, tok, base := startLegacyApprovalGateway(t, op, alpha, 0)
	for _, decision := range []string{"deny", "approve"} {
		t.Run(decision, func(t *testing.T) {
			alpha.Reset()
			var asked atomic.Int32
			pages := make(chan string, 16)
			// The keep-alive comments on the call's response once the client has answered: the
			// wait for the page holds the response open with them.
			waiting := mcptest.NewKeepAlives()
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(tok), mcptest.WithProtocolVersion("2025-11-25"),
				mcptest.WithCapabilities(urlElicitation), mcptest.WithRoundTripper(waiting),
				mcptest.WithElicitation(func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					pages <- req.Params.URL
					waiting.After.Store(true)
					// The user was sent to the page: that is all a 2025-11-25 accept says.
					return &mcp.ElicitResult{Action: "accept"}, nil
				}))
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "ship it"}})
				done <- outcome{res, err}
			}()
			var page string
			select {
			case page = <-pages:
			case o := <-done:
				t.Fatalf("the call ended before its client was sent to the page: %v %+v", o.err, o.res)
			}
			// Two keep-alives after the answer: the ask's own could have written at most one
			// in the instant before the answer reached it. The wait lasts that long: each
			// interval spans several of its pauses, as the default's does.
			for range 2 {
				select {
				case <-waiting.Seen:
				case o := <-done:
					t.Fatalf("the call ended before the decision: %v %+v", o.err, o.res)
				case <-time.After(time.Minute):
					t.Fatal("no keep-alive comment on the response while the call waits for the page")
				}
			}
			c, body := signInToApprovalPage(t, page, op.Username())
			decideOnPage(t, c, base, page, body, decision)
			o := <-done
			if o.err != nil {
				t.Fatal(o.err)
			}
			if n := asked.Load(); n != 1 {
				t.Errorf("the client was sent to the page %d times, want once", n)
			}
			text := mcptest.ResultText(o.res)
			switch decision {
			case "approve":
				if o.res.IsError || text != "ship it" || toolCalls(alpha) != 1 {
					t.Errorf("approved on the page: %q (error %v), backend calls %d", text, o.res.IsError, toolCalls(alpha))
				}
			case "deny":
				if !o.res.IsError || !strings.Contains(text, "denied") || toolCalls(alpha) != 0 {
					t.Errorf("denied on the page: %q (error %v), backend calls %d", text, o.res.IsError, toolCalls(alpha))
				}
			}
		})
	}
}

// TestApprovalPageLegacyWaitEndsWithTheState: a call that waits for the page's decision for a
// 2025-11-25 client (TestApprovalPageLegacyClientWaits) while its requestState expires is asked
// afresh, with a new page, never sent again to the page of a call that can no longer be
// approved.
func TestApprovalPageLegacyWaitEndsWithTheState(t *testing.T) {
	op := realop.Start(t, realop.Options{})
	alpha := mcptest.StartServer(t, "alpha")
	gw, tok, _ := startLegacyApprovalGateway(t, op, alpha, time.Second)
	pages := make(chan string, 16)
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(tok), mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithCapabilities(urlElicitation),
		mcptest.WithElicitation(func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			pages <- req.Params.URL
			return &mcp.ElicitResult{Action: "accept"}, nil
		}))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "ship it"}})
		done <- err
	}()
	next := func() string {
		select {
		case p := <-pages:
			return p
		case err := <-done:
			t.Fatalf("the call ended without waiting for the page: %v", err)
		}
		return ""
	}
	first, second := next(), next()
	cancel()
	<-done
	if first == second {
		t.Errorf("the state expired undecided, and the client was sent to its page %s again", first)
	}
	if n := toolCalls(alpha); n != 0 {
		t.Errorf("backend received %d calls", n)
	}
}

// legacyKeepAlive is the keep-alive interval of startLegacyApprovalGateway: longer than the
// longest pause of the wait for the page's decision (2 s), as the default (15 s) is. With an
// interval shorter than the first pause (250 ms) a comment comes even from a keep-alive whose
// count of silence restarts at every pause, and the test could not tell.
const legacyKeepAlive = 2500 * time.Millisecond

// startLegacyApprovalGateway runs a gateway whose rule confirms alpha__echo on the approval
// page, signing in at op, in front of alpha, with requestStates valid for ttl (0: the
// default); it returns the gateway, a token of op's user and
// the page's base URL.
func startLegacyApprovalGateway(t *testing.T, op *realop.Provider, alpha *mcptest.Server, ttl time.Duration) (Listeners, string, string) {
	t.Helper()
	rule := authz.RuleConfig{ID: "echo-approval", Upstream: "alpha", Tools: []string{mcptest.ToolEcho}, Confirm: authz.ConfirmURL}
	return startConfirmURLGateway(t, op, rule, func(c *Config) {
		c.MRTR.TTL = ttl
		c.Server.SSEKeepAlive = legacyKeepAlive
	}, alpha)
}

// decideOnPage posts decision ("approve" or "deny") on the page as its forms do in a browser:
// Approve is the two steps of the page, the second one approval.MinDwell after the first.
func decideOnPage(t *testing.T, c *http.Client, base, page, body, decision string) {
	t.Helper()
	post := func(form url.Values) (int, string) {
		req, err := http.NewRequest(http.MethodPost, page, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", base)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	status, next := post(url.Values{"decision": {decision}, "csrf": {csrfToken(t, body)}})
	if decision == "approve" && status == http.StatusOK {
		// The confirmation step counts once it has been on screen for MinDwell.
		time.Sleep(approval.MinDwell + 100*time.Millisecond)
		status, next = post(url.Values{"decision": {"confirm"}, "csrf": {csrfToken(t, next)}})
	}
	if status != http.StatusOK {
		t.Fatalf("%s on the page: %d\n%s", decision, status, next)
	}
}

// csrfToken is the decision forms' token on a page.
func csrfToken(t *testing.T, body string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, `name="csrf" value="`)
	if !ok {
		t.Fatalf("no CSRF token on the page:\n%s", body)
	}
	tok, _, _ := strings.Cut(rest, `"`)
	return tok
}
