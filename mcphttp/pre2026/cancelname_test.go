package pre2026

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestCancelledNamesByExactMember: a notifications/cancelled names its request by "requestId"
// exactly, as MCP spells it and a peer that reads names as written reads it. One whose member is
// spelled otherwise ("RequestId", "requestid", "request_id"), which encoding/json took for it,
// cancelled the call: it is now a notification naming nothing, 202, and the call runs to its
// result, sent alone and in a 2025-03-26 batch alike. The exact name still cancels.
func TestCancelledNamesByExactMember(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw, _ := startAskingGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`)
	// call runs a slow call, cancels it naming it by member, and returns its response and
	// whether the backend's call was cancelled.
	call := func(member string) (*response, bool) {
		t.Helper()
		before := be.SlowStats()
		done := make(chan *response, 1)
		go func() {
			done <- do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid),
				`{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"be__slow","arguments":{"ms":600}}}`)
		}()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err := be.WaitSlow(ctx, func(s mcptest.SlowStats) bool { return s.Started == before.Started+1 }); err != nil {
			t.Fatal(err)
		}
		if r := do(t, "POST", gw.URL, legacyHeaders("2025-11-25", sid),
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"`+member+`":"slow-1"}}`); r.Status != http.StatusAccepted {
			t.Fatalf("cancel %s: %d %s", member, r.Status, r.Body)
		}
		r := <-done
		return r, be.SlowStats().Cancelled != before.Cancelled
	}
	for _, member := range []string{"RequestId", "requestid", "REQUESTID", "request_id"} {
		if r, cancelled := call(member); r.Status != http.StatusOK || r.RPC.Error != nil || cancelled {
			t.Fatalf("a cancellation naming its request as %q cancelled it: %d %s", member, r.Status, r.Body)
		}
	}
	if r, _ := call("requestId"); !strings.Contains(string(r.Body), "Request cancelled by the client") {
		t.Fatalf("the cancellation naming its request as requestId did not cancel it: %d %s", r.Status, r.Body)
	}

	bsid, _ := legacyInit(t, gw.URL, "2025-03-26", `{}`)
	echo := rpc("a", "tools/call", `{"name":"be__echo","arguments":{"text":"kept"}}`)
	r := do(t, "POST", gw.URL, legacyHeaders("", bsid), batchOf(echo, rpc(nil, "notifications/cancelled", `{"RequestId":"a"}`)))
	if got := batchMessages(t, r)[`"a"`]; r.Status != http.StatusOK || got.Error != nil || !strings.Contains(string(got.Result), "kept") {
		t.Fatalf("a batch's cancellation naming its request as RequestId cancelled it: %d %s", r.Status, r.Body)
	}
}
