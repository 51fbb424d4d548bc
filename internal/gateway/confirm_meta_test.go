package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// metaCall posts a tools/call of alpha__echo with the given _meta members (beside the protocol
// version and capabilities) and extra params members, and decodes the answer.
func metaCall(t *testing.T, gw Listeners, tok, meta, extra, retry string) (int, rpcResult) {
	t.Helper()
	return postCall(t, gw, tok, "alpha__echo", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`+meta+`},"name":"alpha__echo","arguments":{"text":"pay 10"}`+extra+retry)
}

// TestConfirmationBindsForwardedParams: a confirmation binds what the backend receives beyond
// the arguments: the client's own _meta members and params members the gateway does not know.
// A retry that changes, adds or drops one is refused and nothing is forwarded; the members the
// gateway reads itself (progress token, trace context) may differ, and the backend receives the
// bound members as they were confirmed.
func TestConfirmationBindsForwardedParams(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := confirmGateway(t, iss, alpha)
	alice := mintFor(t, iss, "alice")
	const (
		meta  = `,"com.example/dryRun":true,"progressToken":"p1"`
		extra = `,"x-mode":"safe"`
	)
	ask := func() string {
		_, r := metaCall(t, gw, alice, meta, extra, "")
		if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
			t.Fatalf("expected a confirmation, got %+v", r)
		}
		return r.Result.RequestState
	}
	for _, tt := range []struct{ name, meta, extra string }{
		{"vendor _meta changed", `,"com.example/dryRun":false,"progressToken":"p1"`, extra},
		{"vendor _meta dropped", `,"progressToken":"p1"`, extra},
		{"vendor _meta added", meta + `,"com.example/env":"prod"`, extra},
		{"unknown params member changed", meta, `,"x-mode":"force"`},
		{"unknown params member dropped", meta, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			state := ask()
			alpha.Reset()
			status, r := metaCall(t, gw, alice, tt.meta, tt.extra, approve(state))
			if status != 400 || r.Error == nil || r.Error.Message != "Invalid requestState" {
				t.Fatalf("status %d %+v, want 400 Invalid requestState", status, r)
			}
			if len(alpha.Forwarded()) != 0 {
				t.Error("backend reached")
			}
		})
	}
	t.Run("progress token and trace context may change", func(t *testing.T) {
		state := ask()
		alpha.Reset()
		again := `,"com.example/dryRun":true,"progressToken":"p2","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`
		if _, r := metaCall(t, gw, alice, again, extra, approve(state)); r.Error != nil || r.Result.IsError {
			t.Fatalf("approved retry: %+v", r)
		}
		calls := alpha.RequestsOf("tools/call")
		if len(calls) != 1 || !strings.Contains(string(calls[0].Body), `"com.example/dryRun":true`) {
			t.Fatalf("the backend did not receive the confirmed _meta: %d calls", len(calls))
		}
	})
}

// TestConfirmationShowsForwardedParams: the person asked to confirm is told of every member the
// confirmation binds beside the arguments (the client's own _meta members, params members the
// gateway does not know), since the backend receives them and may act on them; the members the
// gateway reads itself are not listed, and a call with none says nothing more.
func TestConfirmationShowsForwardedParams(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := confirmGateway(t, iss, alpha)
	alice := mintFor(t, iss, "alice")
	message := func(meta, extra string) string {
		t.Helper()
		_, r := metaCall(t, gw, alice, meta, extra, "")
		var reqs map[string]struct {
			Params struct{ Message string }
		}
		if err := json.Unmarshal(r.Result.InputRequests, &reqs); err != nil || len(reqs) != 1 {
			t.Fatalf("expected one confirmation, got %+v", r)
		}
		for _, q := range reqs {
			return q.Params.Message
		}
		return ""
	}
	msg := message(`,"com.example/dryRun":false,"progressToken":"p1"`, `,"x-mode":"force"`)
	for _, want := range []string{`text="pay 10"`, `also sending the backend: `, `_meta={"com.example/dryRun":false}`, `x-mode="force"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "progressToken") || strings.Contains(msg, "protocolVersion") {
		t.Errorf("message %q lists a member the gateway reads itself", msg)
	}
	if msg := message(`,"progressToken":"p1"`, ""); strings.Contains(msg, "also sending") {
		t.Errorf("message %q lists members of a call that has none", msg)
	}
}
