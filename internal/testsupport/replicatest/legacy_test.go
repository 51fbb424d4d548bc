package replicatest

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/freeport"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// requestsMetric is the gateway's counter of client requests, one series per method and outcome.
const requestsMetric = "mcp_gateway_requests_total"

// TestLegacyReplicas: pre-2026 clients (the TypeScript SDK v1 and the go-sdk client pinned to
// 2025-11-25, internal/testsupport/legacyclient) behind HAProxy round-robin, where consecutive requests of
// one session land on different replicas.
//
// "direct" puts three stateless go-sdk servers behind the balancer: they serve a legacy client
// without a session, so any of them answers list and call (a stateless server cannot send the
// client requests, so there is no elicitation there). It proves the harness and the
// different-replica evidence (the balancer's X-Served-By on each response the client saw).
// "gateway" is the three gateway replicas sharing Redis: list, call, a backend elicitation
// answered and a confirmation approved and declined, each answer free to land on any replica.
//
//	go test -race -count=1 -run 'TestLegacyReplicas/direct' ./internal/testsupport/replicatest
//	go test -race -count=1 -run 'TestLegacyReplicas/gateway' ./internal/testsupport/replicatest
func TestLegacyReplicas(t *testing.T) {
	t.Run("direct", func(t *testing.T) {
		lb := startDirectBalancer(t)
		sc := legacyclient.Scenario{
			URL:   lb.mcpURL(),
			Tools: legacyclient.Tools{Echo: mcptest.ToolEcho},
			Steps: []string{"connect", "list_tools", "call_tool", "close"},
		}
		clients := legacyRunners()
		for _, name := range slices.Sorted(maps.Keys(clients)) {
			t.Run(name, func(t *testing.T) {
				steps := clients[name](t, sc)
				legacyclient.Check(t, sc, steps, legacyclient.Expect{Version: legacyclient.TSProtocol, NoSession: true})
				checkSpread(t, steps)
			})
		}
	})
	t.Run("gateway", func(t *testing.T) {
		c := startCluster(t, legacyclient.DeployTool(&atomic.Int64{}), legacyclient.AskRoundsTool())
		sc := legacyclient.Scenario{
			URL: c.lb.mcpURL(),
			// In the cluster's policy echo needs confirmation and deploy does not: deploy (which
			// returns its text) is the plain call, echo the confirmed one.
			// ask_rounds is confirmed, then asks for N names: each round's answer may land on a
			// different replica than the one that asked.
			Tools: legacyclient.Tools{Echo: "alpha__" + legacyclient.ToolDeploy, Ask: "alpha__" + mcptest.ToolAskName, Confirm: "alpha__echo",
				Rounds: "alpha__" + legacyclient.ToolAskRounds},
			Steps: []string{"connect", "list_tools", "call_tool", "elicitation", "confirm_approve", "confirm_decline",
				"rounds_1", "rounds_2", "rounds_3", "close"},
		}
		clients := legacyRunners()
		for _, name := range slices.Sorted(maps.Keys(clients)) {
			t.Run(name, func(t *testing.T) {
				tok, err := c.issuer.Mint(devissuer.Claims{"sub": "legacy-" + name, "scope": scopeUse})
				if err != nil {
					t.Fatal(err)
				}
				sc := sc
				sc.Token = tok
				c.alpha.Reset()
				before := c.requestCounts(t)
				steps := clients[name](t, sc)
				legacyclient.Check(t, sc, steps, legacyclient.Expect{Version: legacyclient.TSProtocol, RoundsConfirmed: true})
				checkSpread(t, steps)
				// The replicas' own account agrees with the balancer's: the session's requests
				// were counted by more than one of them.
				after, served := c.requestCounts(t), 0
				for r, n := range after {
					if n > before[r] {
						served++
					}
				}
				t.Logf("MCP requests counted per replica: before %v, after %v", before, after)
				if served < 2 {
					t.Errorf("the replicas' metrics show the session's requests on %d replica(s), want at least 2", served)
				}
				approved, declined := steps["confirm_approve"], steps["confirm_decline"]
				if approved.OK && declined.OK {
					if n := c.backendCalls("echo"); n != 1 {
						t.Errorf("the backend got %d confirmed echo calls, want 1 (approved once, declined never)", n)
					}
				}
			})
		}
		t.Run("answers posted to other replicas", func(t *testing.T) {
			testLegacyAnswersAcross(t, c)
		})
		t.Run("2025-03-26", func(t *testing.T) {
			testLegacy0326Across(t, c)
		})
	})
}

// testLegacyAnswersAcross addresses the replicas directly: the session starts on r1, the call
// waits for its confirmation on r1, the answer is posted to r2 and must reach r1; a forged
// answer and replays on r3 and r1 are refused and the backend runs the call once. A backend's own
// elicitation is answered the same way, on r3 for a call held by r2.
func testLegacyAnswersAcross(t *testing.T, c *cluster) {
	r1, r2, r3 := c.replicas[0].mcpURL(), c.replicas[1].mcpURL(), c.replicas[2].mcpURL()
	tok, err := c.issuer.Mint(devissuer.Claims{"sub": "legacy-raw", "scope": scopeUse})
	if err != nil {
		t.Fatal(err)
	}
	alice := &legacyclient.Raw{Token: tok}
	c.alpha.Reset()
	sid := alice.Initialize(t, r1)
	stream := alice.Open(t, r1, sid, alice.CallBody("alpha__echo", "across replicas"))
	ask := stream.NextRequest(t, "elicitation/create")
	if r := alice.Post(t, r3, sid, legacyclient.AnswerBody(legacyclient.ForgeID(ask.ID), true)); r.Status != http.StatusBadRequest {
		t.Errorf("a forged answer on r3: want 400, got %s", r)
	}
	if r := alice.Post(t, r2, sid, legacyclient.AnswerBody(ask.ID, true)); r.Status != http.StatusAccepted {
		t.Fatalf("the answer on r2: want 202, got %s", r)
	}
	final := stream.NextResult(t)
	if final.Error != nil || !strings.Contains(string(final.Result), "across replicas") {
		t.Fatalf("the call held by r1 after the answer on r2: result %s error %s", final.Result, final.Error)
	}
	for _, url := range []string{r3, r1} {
		if r := alice.Post(t, url, sid, legacyclient.AnswerBody(ask.ID, true)); r.Status != http.StatusBadRequest {
			t.Errorf("the answer replayed on %s: want 400, got %s", url, r)
		}
	}
	if n := c.backendCalls("echo"); n != 1 {
		t.Errorf("the backend ran the confirmed echo %d times, want 1", n)
	}

	stream = alice.Open(t, r2, sid, alice.CallArgs("alpha__"+mcptest.ToolAskName, "{}"))
	ask = stream.NextRequest(t, "elicitation/create")
	answer := `{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"action":"accept","content":{"name":"Grace"}}}`
	if r := alice.Post(t, r3, sid, answer); r.Status != http.StatusAccepted {
		t.Fatalf("the backend's elicitation answered on r3: want 202, got %s", r)
	}
	if final := stream.NextResult(t); final.Error != nil || !strings.Contains(string(final.Result), "Hello, Grace") {
		t.Fatalf("ask_name held by r2 after the answer on r3: result %s error %s", final.Result, final.Error)
	}
}

// legacyRunners are the pre-2026 clients by subtest name; each speaks 2025-11-25.
func legacyRunners() map[string]func(*testing.T, legacyclient.Scenario) map[string]legacyclient.Step {
	return map[string]func(*testing.T, legacyclient.Scenario) map[string]legacyclient.Step{
		"typescript-sdk-" + legacyclient.TSVersion: func(t *testing.T, sc legacyclient.Scenario) map[string]legacyclient.Step {
			return legacyclient.RunTS(t, sc)
		},
		"go-sdk-1.8.0-" + legacyclient.TSProtocol: func(t *testing.T, sc legacyclient.Scenario) map[string]legacyclient.Step {
			return legacyclient.RunGo(t, sc, legacyclient.TSProtocol)
		},
	}
}

// checkSpread asserts that the session's requests were served by more than one replica, and that
// some two consecutive ones were served by different replicas: no affinity was needed.
func checkSpread(t *testing.T, steps map[string]legacyclient.Step) {
	t.Helper()
	checkServed(t, legacyclient.ServedBy(steps))
}

// checkServed is checkSpread over the replicas that served a run's requests, in order.
func checkServed(t *testing.T, served []string) {
	t.Helper()
	distinct := slices.Compact(slices.Sorted(slices.Values(served)))
	consecutive := false
	for i := 1; i < len(served); i++ {
		consecutive = consecutive || served[i] != served[i-1]
	}
	t.Logf("the session's %d requests were served by %v", len(served), served)
	if len(distinct) < 2 || !consecutive {
		t.Errorf("one session's requests were served by %v, want consecutive requests on different replicas", served)
	}
}

// startDirectBalancer puts HAProxy round-robin in front of three stateless go-sdk servers (named
// like the gateway replicas), health-checked on a stand-in /readyz.
func startDirectBalancer(t *testing.T) *balancer {
	t.Helper()
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, `{"ready":true}`)
	}))
	t.Cleanup(ready.Close)
	readyPort := portOf(t, ready.URL)
	var servers []balancerServer
	for i := range replicaCount {
		s := mcptest.StartServer(t, "alpha")
		u, err := url.Parse(s.URL())
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, balancerServer{Name: "s" + strconv.Itoa(i+1), Addr: u.Host, AdminPort: readyPort})
	}
	ports := freeport.Loopback(t, 2)
	lb := startBalancer(t, t.TempDir(), ports[0], ports[1], servers)
	for _, s := range servers {
		if err := lb.waitState(s.Name, "UP"); err != nil {
			t.Fatalf("balancer: %v", err)
		}
	}
	return lb
}

// portOf is the port of a loopback URL.
func portOf(t *testing.T, raw string) int {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// requestCounts returns, per replica, the sum of the gateway's client-request counter over all
// its series: whatever the labels, it grows by one for each MCP request the replica served.
func (c *cluster) requestCounts(t *testing.T) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, r := range c.replicas {
		ctx, cancel := context.WithTimeout(t.Context(), requestTimeout)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.adminAddr+"/metrics", nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("%s /metrics: %v", r.name, err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		if err != nil {
			t.Fatalf("%s /metrics: %v", r.name, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, requestsMetric+"{") {
				continue
			}
			i := strings.LastIndexByte(line, ' ')
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				out[r.name] += v
			}
		}
	}
	return out
}
