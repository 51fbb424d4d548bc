package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestLegacyEveryRequestCounts: every request of a pre-2026 client takes a token of its caller's
// rate limit, whatever the edge does with it: those it answers itself (ping, logging/setLevel,
// resources/subscribe), notifications (notifications/cancelled, a PUBLISH every replica
// handles) and the client's answers as much as the calls it translates. Once the caller's
// tokens are spent, each of them is refused with 429 and Retry-After, and has no effect.
// Before, only initialize and the translated calls counted: tens of thousands of the others a
// second went through.
func TestLegacyEveryRequestCounts(t *testing.T) {
	f := startAuthGatewayWith(t, func(c *Config) {
		c.RateLimit.PerCaller = "1/h burst 3"
	})
	raw := &legacyclient.Raw{Token: f.token(t, devissuer.Claims{"sub": "alice", "scope": "tools:read"})}
	sid := raw.Initialize(t, f.url()) // initialize and notifications/initialized: two tokens
	if r := raw.Post(t, f.url(), sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.Status != http.StatusOK {
		t.Fatalf("a ping within the limit: %s", r)
	}
	for _, tt := range []struct{ name, body string }{
		{"ping", `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
		{"logging/setLevel", `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}`},
		{"resources/subscribe", `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"alpha+mem://readme"}}`},
		{"notifications/cancelled", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`},
		{"notifications/initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"an answer", `{"jsonrpc":"2.0","id":"g1.x","result":{"action":"accept","content":{}}}`},
		{"tools/call", raw.CallBody("alpha__echo", "hi")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := raw.Post(t, f.url(), sid, tt.body)
			if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
				t.Errorf("over the caller's limit: %s (Retry-After %q), want 429", r, r.Header.Get("Retry-After"))
			}
		})
	}
}

// TestLegacyWaitHoldsSlot: a pre-2026 call waiting for its client's input holds its caller's
// in-flight slot for the whole wait, as the request it is: a caller limited to two requests in
// flight whose two calls wait for an elicitation answer gets 429 for a third request, while
// another caller is served. Before, only the inner rounds took a slot and gave it back before
// the wait, so one caller could hold thousands of waits.
func TestLegacyWaitHoldsSlot(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	iss := newIssuer(t)
	gw := legacyGateway(t, iss, func(c *Config) { c.Server.MaxConcurrentPerCaller = 2 }, alpha)
	alice := &legacyclient.Raw{Token: mintFor(t, iss, "alice")}
	sid := alice.Initialize(t, gw.url())
	for range 2 {
		s := alice.Open(t, gw.url(), sid, alice.CallArgs("alpha__"+mcptest.ToolAskName, "{}"))
		s.NextRequest(t, "elicitation/create") // the call now waits for an answer nobody sends
	}
	if r := alice.Post(t, gw.url(), sid, `{"jsonrpc":"2.0","id":5,"method":"ping"}`); r.Status != http.StatusTooManyRequests {
		t.Errorf("a third request while two calls wait: %s, want 429", r)
	}
	bob := &legacyclient.Raw{Token: mintFor(t, iss, "bob")}
	bobSID := bob.Initialize(t, gw.url())
	if r := bob.CallText(t, gw.url(), bobSID, "alpha__echo", "hi"); r.Status != http.StatusOK || legacyclient.ResultText(r.Msgs) != "hi" {
		t.Errorf("another caller: %s", r)
	}
}

// TestLegacyAnswerNeedsNoSlot: the answer that lets a waiting call finish is never refused for
// want of the slots the waiting calls hold. A caller limited to two requests in flight whose
// two calls wait for elicitation answers on each of two replicas (sharing a real Redis) gets
// each answer through, on the asking replica and on the other one, and each call ends with its
// result. Before, every answer was 429 and the calls waited out legacy.askTimeout. What is not
// such an answer (a forged id, a ping) still needs a slot.
func TestLegacyAnswerNeedsNoSlot(t *testing.T) {
	redis := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	iss := newIssuer(t)
	limit := func(c *Config) { c.Server.MaxConcurrentPerCaller = 2; c.Redis.URL = redis.URL() }
	a, b := legacyGateway(t, iss, limit, alpha), legacyGateway(t, iss, limit, alpha)
	alice := &legacyclient.Raw{Token: mintFor(t, iss, "alice")}
	sid := alice.Initialize(t, a.url())
	type waiting struct {
		s  *legacyclient.Stream
		id json.RawMessage
	}
	var calls []waiting
	for _, gw := range []*authGateway{a, a, b, b} {
		s := alice.Open(t, gw.url(), sid, alice.CallArgs("alpha__"+mcptest.ToolAskName, "{}"))
		calls = append(calls, waiting{s, s.NextRequest(t, "elicitation/create").ID})
	}
	if r := alice.Post(t, a.url(), sid, `{"jsonrpc":"2.0","id":5,"method":"ping"}`); r.Status != http.StatusTooManyRequests {
		t.Errorf("a ping while two calls wait: %s, want 429", r)
	}
	forged := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Eve"}}}`, legacyclient.ForgeID(calls[0].id))
	if r := alice.Post(t, a.url(), sid, forged); r.Status != http.StatusTooManyRequests {
		t.Errorf("a forged answer while two calls wait: %s, want 429", r)
	}
	// Each answer on the other replica than the one asking (whose slots are as full), then on
	// the asking one.
	for i, to := range []*authGateway{b, a, a, b} {
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Ada%d"}}}`, calls[i].id, i)
		if r := alice.Post(t, to.url(), sid, answer); r.Status != http.StatusAccepted {
			t.Fatalf("answer %d: %s, want 202", i, r)
		}
		res := calls[i].s.NextResult(t)
		msg := json.RawMessage(`{"result":` + string(res.Result) + `}`)
		if got, want := legacyclient.ResultText([]json.RawMessage{msg}), fmt.Sprintf("Hello, Ada%d", i); got != want {
			t.Errorf("call %d: %q (error %s), want %q", i, got, res.Error, want)
		}
	}
}
