package replicatest

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestReplicas runs the whole deployment once and shows, step by step, that any replica serves
// any request (issue 6). The subtests share the deployment and run in order.
func TestReplicas(t *testing.T) {
	c := startCluster(t)
	var firstAnswer confirmation
	t.Run("confirmation issued on one replica is answered on another", func(t *testing.T) {
		firstAnswer = testConfirmAcross(t, c)
	})
	t.Run("replayed confirmation is refused on a third replica", func(t *testing.T) {
		testReplay(t, c, firstAnswer)
	})
	t.Run("backend round trip completes on another replica", func(t *testing.T) {
		testRoundTripAcross(t, c)
	})
	t.Run("rate limit is shared by the replicas", func(t *testing.T) {
		testSharedRateLimit(t, c)
	})
	t.Run("leased rate limit stays within its documented bound", func(t *testing.T) {
		testLeasedRateLimit(t, c)
	})
	t.Run("rolling restart under load loses nothing", func(t *testing.T) {
		testRollingRestart(t, c)
	})
	t.Run("redis outage fails closed and recovers", func(t *testing.T) {
		testRedisOutage(t, c)
	})
}

// confirmation is an approved confirmation: who answered it and with what, so it can be replayed.
type confirmation struct {
	client     *mcpClient
	args       string
	state      string
	echoBefore int // backend echo calls before the answer
}

// ask calls the confirm-echo tool on url and returns the gateway's requestState.
func ask(t *testing.T, cl *mcpClient, url, args string) (string, reply) {
	t.Helper()
	r, err := cl.call(url, "alpha__echo", args, "", "")
	if err != nil {
		t.Fatalf("ask: %v", err)
	}
	if !r.ok() || r.Result.ResultType != "input_required" || r.Result.RequestState == "" || r.Result.InputRequests[confirmKey] == nil {
		t.Fatalf("ask on %s: want 200 input_required with %s, got %s", url, confirmKey, r)
	}
	return r.Result.RequestState, r
}

// answer approves state on url; the call must be forwarded and echo the arguments' text.
func answer(t *testing.T, cl *mcpClient, url, args, state, wantText string) reply {
	t.Helper()
	r, err := cl.call(url, "alpha__echo", args, approve(), state)
	if err != nil {
		t.Fatalf("answer: %v", err)
	}
	if !r.ok() || r.Result.ResultType != "complete" || r.Result.IsError || r.text() != wantText {
		t.Fatalf("answer on %s: want 200 complete %q, got %s", url, wantText, r)
	}
	return r
}

func testConfirmAcross(t *testing.T, c *cluster) confirmation {
	r1, r2 := c.replicas[0], c.replicas[1]
	alice := c.client(t, "alice")
	c.alpha.Reset()
	args := `{"text":"deploy to production"}`

	state, _ := ask(t, alice, r1.mcpURL(), args)
	if n := c.backendCalls("echo"); n != 0 {
		t.Fatalf("backend got %d echo calls before the answer, want 0", n)
	}
	answer(t, alice, r2.mcpURL(), args, state, "deploy to production")
	if n := c.backendCalls("echo"); n != 1 {
		t.Fatalf("backend got %d echo calls after the answer, want 1", n)
	}
	first := confirmation{client: alice, args: args, state: state, echoBefore: 0}

	// Through the balancer: round-robin without affinity sends the two legs to two replicas.
	lbArgs := `{"text":"through the balancer"}`
	lbState, asked := ask(t, alice, c.lb.mcpURL(), lbArgs)
	answered := answer(t, alice, c.lb.mcpURL(), lbArgs, lbState, "through the balancer")
	if asked.servedBy() == "" || asked.servedBy() == answered.servedBy() {
		t.Errorf("balancer legs served by %q then %q, want two different replicas", asked.servedBy(), answered.servedBy())
	}
	if n := c.backendCalls("echo"); n != 2 {
		t.Errorf("backend got %d echo calls, want 2", n)
	}
	t.Logf("confirmations: asked on r1, approved on r2; asked on %s, approved on %s via the balancer; backend echo calls 2",
		asked.servedBy(), answered.servedBy())
	return first
}

func testReplay(t *testing.T, c *cluster, first confirmation) {
	if first.state == "" {
		t.Fatal("no approved confirmation to replay (the previous subtest failed)")
	}
	c.alpha.Reset()
	refused := 0
	// r3 first, as issue 6 asks; then the replica that issued and the one that consumed it.
	for _, r := range []*replica{c.replicas[2], c.replicas[0], c.replicas[1]} {
		got, err := first.client.call(r.mcpURL(), "alpha__echo", first.args, approve(), first.state)
		if err != nil {
			t.Fatalf("replay on %s: %v", r.name, err)
		}
		if got.Status != http.StatusBadRequest || got.code() != codeInvalidParams {
			t.Errorf("replay on %s: want 400 %d, got %s", r.name, codeInvalidParams, got)
			continue
		}
		refused++
	}
	if n := c.backendCalls("echo"); n != 0 {
		t.Errorf("replays reached the backend %d times, want 0 (it had exactly one call for this confirmation)", n)
	}
	t.Logf("replay: replayed 3, refused %d, backend calls from replays %d", refused, c.backendCalls("echo"))
}

// roundTrip runs ask_name: the first leg on startURL, the answer on answerURL.
func roundTrip(t *testing.T, cl *mcpClient, startURL, answerURL, name string) (reply, reply) {
	t.Helper()
	first, err := cl.call(startURL, "alpha__ask_name", `{}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if !first.ok() || first.Result.ResultType != "input_required" || first.Result.InputRequests[mcptest.AskNameInputKey] == nil {
		t.Fatalf("ask_name first leg on %s: %s", startURL, first)
	}
	if strings.Contains(first.Result.RequestState, mcptest.AskNameState) {
		t.Fatalf("the backend's requestState reached the client in clear: %s", first.Result.RequestState)
	}
	resp := `{"` + mcptest.AskNameInputKey + `":{"action":"accept","content":{"name":"` + name + `"}}}`
	second, err := cl.call(answerURL, "alpha__ask_name", `{}`, resp, first.Result.RequestState)
	if err != nil {
		t.Fatal(err)
	}
	if !second.ok() || second.Result.ResultType != "complete" || second.text() != "Hello, "+name {
		t.Fatalf("ask_name answer on %s: want Hello, %s, got %s", answerURL, name, second)
	}
	return first, second
}

func testRoundTripAcross(t *testing.T, c *cluster) {
	bob := c.client(t, "bob")
	c.alpha.Reset()
	roundTrip(t, bob, c.replicas[1].mcpURL(), c.replicas[2].mcpURL(), "Ada")
	// The retry reached the backend carrying the backend's own state, unwrapped by r3.
	reqs := c.alpha.Requests()
	if n := c.backendCalls("ask_name"); n != 2 || !strings.Contains(string(reqs[len(reqs)-1].Body), `"requestState":"`+mcptest.AskNameState+`"`) {
		t.Fatalf("backend got %d ask_name calls, last %s; want 2, the last with its own state", n, reqs[len(reqs)-1].Body)
	}
	first, second := roundTrip(t, bob, c.lb.mcpURL(), c.lb.mcpURL(), "Grace")
	if first.servedBy() == second.servedBy() {
		t.Errorf("balancer legs both served by %q, want two replicas", first.servedBy())
	}
	t.Logf("round trips: started on r2, completed on r3; started on %s, completed on %s via the balancer",
		first.servedBy(), second.servedBy())
}

// exhaustLimit calls add limitBurst+1 times, cycling through the replicas, and checks that the
// first limitBurst pass and the next is refused with 429, Retry-After and -32012.
func exhaustLimit(t *testing.T, c *cluster, cl *mcpClient) {
	t.Helper()
	for i := range limitBurst + 1 {
		r := c.replicas[i%len(c.replicas)]
		got, err := cl.call(r.mcpURL(), "alpha__add", `{"a":2,"b":3}`, "", "")
		if err != nil {
			t.Fatalf("call %d on %s: %v", i+1, r.name, err)
		}
		if i < limitBurst {
			if !got.ok() || got.text() != "5" {
				t.Fatalf("call %d on %s: want 200 with 5, got %s", i+1, r.name, got)
			}
			continue
		}
		secs, err := strconv.Atoi(got.Header.Get("Retry-After"))
		if got.Status != http.StatusTooManyRequests || got.code() != codeRateLimited || err != nil || secs < 1 {
			t.Fatalf("call %d on %s: want 429 %d with Retry-After ≥ 1s, got %s Retry-After %q",
				i+1, r.name, codeRateLimited, got, got.Header.Get("Retry-After"))
		}
	}
}

func testSharedRateLimit(t *testing.T, c *cluster) {
	c.alpha.Reset()
	exhaustLimit(t, c, c.client(t, "carol"))
	if n := c.backendCalls("add"); n != limitBurst {
		t.Errorf("backend got %d add calls, want %d", n, limitBurst)
	}
	// The limit is per caller: another user is not affected.
	if got, err := c.client(t, "dave").call(c.replicas[0].mcpURL(), "alpha__add", `{"a":2,"b":3}`, "", ""); err != nil || !got.ok() {
		t.Errorf("another user's call: %v %s", err, got)
	}
	t.Logf("rate limit %s: %d calls admitted across r1..r3, call %d refused with 429", limitAdd, limitBurst, limitBurst+1)
}
