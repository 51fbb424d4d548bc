package replicatest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// testLegacy0326Across runs the 2025-03-26 clients against the cluster: their session, sealed in
// its id, opens on whichever replica a request lands on, and so does a JSON-RPC batch, whose
// messages each take a token of the caller's rate limit shared through Redis.
//
//	go test -race -count=1 -run 'TestLegacyReplicas/gateway/2025-03-26' ./internal/testsupport/replicatest
func testLegacy0326Across(t *testing.T, c *cluster) {
	sc := legacyclient.Scenario0326{
		URL: c.lb.mcpURL(),
		// As for the 2025-11-25 clients: deploy is the plain call, echo the confirmed one (which
		// 2025-03-26 cannot confirm); the cluster's policy allows every other tool of alpha, so
		// the batch's refused call is one of a tool alpha does not have.
		Tools: legacyclient.Tools0326{Echo: "alpha__" + legacyclient.ToolDeploy, Progress: "alpha__" + mcptest.ToolProgress,
			Add: "alpha__" + mcptest.ToolAdd, Confirm: "alpha__echo", Denied: "alpha__nope"},
		Steps: []string{"connect", "list_tools", "call_tool", "structured", "progress", "confirm", "batch", "close"},
	}
	want := legacyclient.Expect0326{Version: legacyclient.Protocol20250326, Strict: true, ConfirmRefused: true}
	t.Run("typescript-sdk-"+legacyclient.TS0326Version, func(t *testing.T) {
		sc := sc
		sc.Token = mint0326(t, c, "legacy-0326-ts")
		c.alpha.Reset()
		steps := legacyclient.RunTS0326(t, sc)
		legacyclient.Check0326(t, sc, steps, want)
		checkServed(t, legacyclient.ServedBy0326(steps))
		if n := c.backendCalls("echo"); n != 0 {
			t.Errorf("the confirmed echo reached the backend %d times, want never", n)
		}
	})
	t.Run("mcp-remote-"+legacyclient.MCPRemoteVersion+"/host-2024-11-05", func(t *testing.T) {
		sc := sc
		sc.Token = mint0326(t, c, "legacy-0326-remote")
		sc.Steps = []string{"connect", "list_tools", "call_tool", "structured", "progress", "confirm", "close"}
		before := c.requestCounts(t)
		steps := legacyclient.RunMCPRemote(t, sc, "2024-11-05")
		legacyclient.Check0326(t, sc, steps, want)
		after, served := c.requestCounts(t), 0
		for r, n := range after {
			if n > before[r] {
				served++
			}
		}
		if served < 2 {
			t.Errorf("the replicas' metrics show mcp-remote's requests on %d replica(s), want at least 2: before %v, after %v", served, before, after)
		}
	})
	t.Run("batch limited across replicas", func(t *testing.T) {
		testBatchLimitAcross(t, c)
	})
}

// testBatchLimitAcross: a session opened on r1 sends on r2 a batch of one more add call than the
// caller's shared limit on add admits; each call takes a token as if sent alone, so exactly the
// limit's burst reaches the backend, and a further call on r3 finds no token left.
func testBatchLimitAcross(t *testing.T, c *cluster) {
	r1, r2, r3 := c.replicas[0].mcpURL(), c.replicas[1].mcpURL(), c.replicas[2].mcpURL()
	alice := &legacyclient.Raw{Token: mint0326(t, c, "legacy-0326-batch"), Protocol: legacyclient.Protocol20250326}
	sid := alice.Initialize(t, r1)
	c.alpha.Reset()
	calls := make([]string, limitBurst+1)
	for i := range calls {
		calls[i] = alice.CallArgs("alpha__"+mcptest.ToolAdd, `{"a":1,"b":2}`)
	}
	r := alice.Post(t, r2, sid, "["+strings.Join(calls, ",")+"]")
	if r.Status != http.StatusOK || len(r.Msgs) != len(calls) {
		t.Fatalf("the batch on r2: want 200 with %d answers, got %s", len(calls), r)
	}
	sums := 0
	for _, m := range r.Msgs {
		var a struct {
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(m, &a); err != nil {
			t.Fatal(err)
		}
		if a.Error == nil && !a.Result.IsError && strings.Contains(string(m), `{\"sum\":3}`) {
			sums++
		}
	}
	if sums != limitBurst {
		t.Errorf("%d calls of the batch were served, want the limit's burst %d: %s", sums, limitBurst, r.Body)
	}
	if n := c.backendCalls("add"); n != limitBurst {
		t.Errorf("the backend got %d add calls, want %d", n, limitBurst)
	}
	one := alice.Post(t, r3, sid, alice.CallArgs("alpha__"+mcptest.ToolAdd, `{"a":1,"b":2}`))
	if strings.Contains(one.Body, `{\"sum\":3}`) {
		t.Errorf("a call on r3 after the batch on r2 was served: the limit's tokens were not shared: %s", one)
	}
	if n := c.backendCalls("add"); n != limitBurst {
		t.Errorf("the backend got %d add calls after the one on r3, want still %d", n, limitBurst)
	}
}

// mint0326 is a token for subject with the scope every rule asks for.
func mint0326(t *testing.T, c *cluster, subject string) string {
	t.Helper()
	tok, err := c.issuer.Mint(devissuer.Claims{"sub": subject, "scope": scopeUse})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
