package gateway

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
	"github.com/mcp-gateway/gateway/internal/testsupport/freeport"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestApprovalPageDenialsInBrowser is SEP-2643's first use case end to end, with the gateway
// binary, two replicas over one Redis, a real OpenID provider and a person in chromium: the call
// is denied on replica A with the envelope (available, a url hint, a handle) beside the page's URL;
// the user approves on the page; the client's retry on replica B, echoing the handle, runs the
// call once, and B ties the retry to the denial in its log. A call the user denies on the page is
// answered, on retry, with a failed tool call carrying "unavailable".
func TestApprovalPageDenialsInBrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.New(t)
	op := realop.Start(t, realop.Options{})
	redis := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	site := newApprovalSite(t, op, alpha)
	site.drafts = []string{mcphttp.DraftDenials}
	ports := freeport.Loopback(t, 4) // at once, as TestApprovalInBrowser's
	a := site.start(t, "denials-a", redis.URL(), 0, ports[0:2])
	b := site.start(t, "denials-b", redis.URL(), 0, ports[2:4])
	a.proc.waitReady(t)
	b.proc.waitReady(t)
	tok, err := op.UserToken(callCtx(t), op.Username(), realop.UserPassword)
	if err != nil {
		t.Fatal(err)
	}

	// ask is denied on A and decided on the page by decide; it returns the retry's answer on B,
	// echoing the denial's handle.
	ask := func(t *testing.T, args string, decide func(tab context.Context)) (wire, string) {
		t.Helper()
		first := modernCall(t, a.mcpURL(), tok, capsURL, "alpha__echo", args, "")
		var m answer
		if err := json.Unmarshal([]byte(first.Msg), &m); err != nil {
			t.Fatal(err)
		}
		env := envelopeOf(t, m)
		if env == nil || env.Remediation != "available" || env.AuthorizationContextID == "" ||
			len(env.RemediationHints) != 1 || string(env.RemediationHints[0]) != `{"type":"url"}` {
			t.Fatalf("the denial: %s", first.Msg)
		}
		tab := browsertest.Tab(t, browser)
		signInOnPage(t, tab, pageOf(t, first), op.Username())
		decide(tab)
		caps := capsURL + `,"io.modelcontextprotocol/authorization-context-id":"` + env.AuthorizationContextID + `"`
		return modernCall(t, b.mcpURL(), tok, caps, "alpha__echo", args, decided("accept", stateOf(t, first))), env.AuthorizationContextID
	}

	t.Run("approved", func(t *testing.T) {
		alpha.Reset()
		w, handle := ask(t, `{"text":"approved on the page"}`, func(tab context.Context) { browsertest.Approve(t, tab) })
		if w.Status != 200 || !strings.Contains(w.Msg, `"text":"approved on the page"`) || strings.Contains(w.Msg, "io.modelcontextprotocol/authorization") {
			t.Fatalf("the approved retry: %d %s", w.Status, w.Msg)
		}
		if n := toolCalls(alpha); n != 1 {
			t.Errorf("backend received %d calls, want 1", n)
		}
		mcptest.WaitFor(t, "B's log of the echoed handle", func() bool { return logHas(b, "authorization context echoed", "verified=true", handle) })
	})

	t.Run("denied", func(t *testing.T) {
		alpha.Reset()
		w, _ := ask(t, `{"text":"denied on the page"}`, func(tab context.Context) {
			browsertest.ClickOn(t, tab, "#deny")
			browsertest.WaitFor(t, tab, "main.outcome-denied")
		})
		var m answer
		if err := json.Unmarshal([]byte(w.Msg), &m); err != nil {
			t.Fatal(err)
		}
		if env := envelopeOf(t, m); env == nil || env.Remediation != "unavailable" || len(env.RemediationHints) != 0 || !m.Result.IsError {
			t.Fatalf("the denied retry: %s", w.Msg)
		}
		if n := toolCalls(alpha); n != 0 {
			t.Errorf("backend received %d calls after a denial", n)
		}
	})
}

// pageOf is the approval page's URL in an input_required answer.
func pageOf(t *testing.T, w wire) string {
	t.Helper()
	var m struct {
		Result struct {
			InputRequests map[string]struct {
				Params struct{ URL string } `json:"params"`
			} `json:"inputRequests"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(w.Msg), &m); err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Result.InputRequests {
		if r.Params.URL != "" {
			return r.Params.URL
		}
	}
	t.Fatalf("no page URL: %s", w.Msg)
	return ""
}

// logHas reports whether one line of the replica's log holds every part.
func logHas(r approvalReplica, parts ...string) bool {
	b, err := os.ReadFile(r.proc.logPath)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
