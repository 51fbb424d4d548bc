package gateway

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestApprovalPendingBounded: calls waiting for the approval page are bounded per caller, in
// count and in bytes, in the shared Redis. One caller sending 30 calls of 180 KiB adds at most
// its byte budget to Redis (not 7 MB), the calls over the budget are refused with 429 and
// stored nowhere, another caller is still asked, and a call the client declines gives its
// share back. Each ask also takes a token of the rule's rate limit.
//
// The budget is configured at 1 MiB rather than left at its default of 8 MiB: what is tested
// is that the budget holds, and filling 8 MiB takes calls eight times as large, each decoded,
// sealed and stored under the race detector. TestDocDefaults checks the default's value
// that docs/approval.md promises.
func TestApprovalPendingBounded(t *testing.T) {
	t.Parallel()
	const pendingBudget = 1 << 20
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	rs := testredis.Start(t)
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Redis.URL = rs.URL()
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "page", Upstream: "alpha", Tools: []string{"echo"}, Confirm: authz.ConfirmURL},
			{ID: "page-limited", Upstream: "alpha", Tools: []string{"add"}, Confirm: authz.ConfirmURL, RateLimit: "2/h"},
		}
		c.Approval.ClientID = "gateway-approval"
		c.Approval.MaxPendingBytesPerCaller = pendingBudget
	}, alpha)
	raw := redis.NewClient(&redis.Options{Addr: rs.Addr(), Password: rs.Password(), DisableIdentity: true})
	t.Cleanup(func() { _ = raw.Close() })
	usedMemory := func() int64 {
		t.Helper()
		info, err := raw.Info(context.Background(), "memory").Result()
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(info, "used_memory:")
		n, err := strconv.ParseInt(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	alice := mintFor(t, iss, "alice")
	// 180 KiB of arguments, in strings of 1 KiB (the decoder bounds one string's length).
	big := `{"text":"x","pad":["` + strings.Repeat(strings.Repeat("A", 1<<10)+`","`, 180) + `"]}`
	before := usedMemory()
	var asked, refused []string
	for range 30 {
		status, r := callWithMeta(t, gw, alice, urlElicitMeta, "alpha__echo", big, "")
		switch {
		case r.Result.ResultType == "input_required":
			asked = append(asked, r.Result.RequestState)
		case status == 429 && r.Error != nil && r.Error.Code == -32012 && strings.Contains(r.Error.Message, "waiting for approval"):
			refused = append(refused, "")
		default:
			t.Fatalf("call of 180 KiB: %d %+v", status, r.Error)
		}
	}
	grown := usedMemory() - before
	t.Logf("30 calls of 180 KiB: %d asked, %d refused, Redis grew by %d bytes", len(asked), len(refused), grown)
	// 180 KiB of arguments seal to about 245 KiB: four fit in the budget of 1 MiB.
	if len(asked) != 4 || grown > pendingBudget+(1<<20) {
		t.Errorf("%d calls asked and Redis grew by %d bytes; want 4 and at most the budget of %d bytes",
			len(asked), grown, pendingBudget)
	}
	// docs/approval.md: the refusal tells the client when to come back (Retry-After: 60).
	h := modernHeaders("tools/call", "alpha__echo")
	h.Set("Authorization", "Bearer "+alice)
	if status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", h,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+urlElicitMeta+`,"name":"alpha__echo","arguments":`+big+`}}`); status != 429 || hdr.Get("Retry-After") != "60" {
		t.Errorf("a call over the budget: %d, Retry-After %q: %.200s", status, hdr.Get("Retry-After"), body)
	}
	if _, r := callWithMeta(t, gw, mintFor(t, iss, "bob"), urlElicitMeta, "alpha__echo", big, ""); r.Result.ResultType != "input_required" {
		t.Errorf("another caller: %+v", r.Error)
	}
	// docs/approval.md: a sealed record is at most 2 MiB; a call whose record would be larger is
	// a tool error, asked of no one, stored nowhere.
	huge := `{"text":"x","pad":["` + strings.Repeat(strings.Repeat("A", 1<<10)+`","`, 2000) + `"]}`
	before = usedMemory()
	if _, r := callWithMeta(t, gw, mintFor(t, iss, "carol"), urlElicitMeta, "alpha__echo", huge, ""); !r.Result.IsError ||
		r.Result.ResultType == "input_required" || !strings.Contains(fmt.Sprint(r.Result.Content), "too large to be shown for approval") {
		t.Errorf("a call of 2 MB: %+v %+v", r.Result, r.Error)
	}
	if grown := usedMemory() - before; grown > 1<<20 {
		t.Errorf("a call too large for the page grew Redis by %d bytes", grown)
	}
	// A declined call gives its share back: one more call is asked.
	decline := `,"inputResponses":{"io.mcp-gateway/confirm":{"action":"decline"}},"requestState":"` + asked[0] + `"`
	if _, r := callWithMeta(t, gw, alice, urlElicitMeta, "alpha__echo", big, decline); !r.Result.IsError {
		t.Fatalf("decline: %+v", r)
	}
	if _, r := callWithMeta(t, gw, alice, urlElicitMeta, "alpha__echo", big, ""); r.Result.ResultType != "input_required" {
		t.Errorf("a call after one was declined: %+v", r.Error)
	}
	// Asks count against the rule's rate limit: two per hour.
	for i := range 3 {
		status, r := callWithMeta(t, gw, alice, urlElicitMeta, "alpha__add", `{"a":1,"b":2}`, "")
		if limited := status == 429 && r.Error != nil && strings.Contains(r.Error.Message, "Rate limit"); limited != (i == 2) {
			t.Errorf("ask %d under a limit of 2/h: %d %+v", i, status, r.Error)
		}
	}
	if n := toolCalls(alpha); n != 0 {
		t.Errorf("backend received %d calls", n)
	}
}
