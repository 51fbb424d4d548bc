//lint:file-ignore SA1019 pre-2026 clients and backends still use logging, sampling and roots, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// alternate is a RoundTripper that sends each request to the next of hosts in turn, as a
// balancer without affinity does: a pre-2026 session's requests and its GET stream land on
// both replicas.
type alternate struct {
	base  http.RoundTripper
	hosts []string
	n     atomic.Uint64
}

func (a *alternate) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Host = a.hosts[int(a.n.Add(1))%len(a.hosts)]
	r.Host = r.URL.Host
	return a.base.RoundTrip(r)
}

// listenSets records the resource subscriptions of every subscriptions/listen a backend
// receives, so a test can see what the gateway asked the backend to watch.
func listenSets(s *mcptest.Server) <-chan []string {
	sets := make(chan []string, 64)
	s.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsListenParams); ok && p.Notifications != nil {
				select {
				case sets <- slices.Clone(p.Notifications.ResourceSubscriptions):
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	return sets
}

// waitListen waits (bounded) for a listen whose set holds uri and returns that set.
func waitListen(t *testing.T, sets <-chan []string, uri string) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case s := <-sets:
			if slices.Contains(s, uri) {
				return s
			}
		case <-deadline:
			t.Fatalf("no listen subscribed to %s reached the backend", uri)
		}
	}
}

// waitReady polls gw's /readyz (bounded) until it answers 200.
func waitReady(t *testing.T, gw Listeners) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, body := readyz(t, gw)
		if status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz after the Redis restart: %d %+v", status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// calledTools is the tools/call names a backend received since its last Reset.
func calledTools(s *mcptest.Server) []string {
	var names []string
	for _, x := range s.RequestsOf("tools/call") {
		names = append(names, x.Header.Get("Mcp-Name"))
	}
	return names
}

// hearsOf pokes the backend's update of uri until the pre-2026 client has heard of it once more
// (bounded): its GET stream is alive and the backend's listen still watches uri.
func hearsOf(t *testing.T, alpha *mcptest.Server, updates *mcptest.ResourceUpdates, uri, when string) {
	t.Helper()
	seen := func() int {
		return len(slices.DeleteFunc(updates.Seen(), func(u string) bool { return u != "alpha+"+uri }))
	}
	before := seen()
	deadline := time.Now().Add(10 * time.Second)
	for seen() == before {
		if time.Now().After(deadline) {
			t.Fatalf("%s the pre-2026 client no longer hears of %s", when, uri)
		}
		_ = alpha.MCP().ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		time.Sleep(20 * time.Millisecond)
	}
}

// retryPage retries the approval-page call of state on gw and returns the status, the
// Retry-After header and the answer.
func retryPage(t *testing.T, gw Listeners, tok, state string) (int, string, urlAsk) {
	t.Helper()
	h := modernHeaders("tools/call", "alpha__whoami")
	h.Set("Authorization", "Bearer "+tok)
	status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+
		urlElicitMeta+`,"name":"alpha__whoami","arguments":{},"requestState":"`+state+`"}}`)
	var r urlAsk
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("%d %s: %v", status, body, err)
	}
	return status, hdr.Get("Retry-After"), r
}

// TestRedisRestartedUnderTraffic: an operator restarts Redis (the process stopped and started
// again on the same port, empty, as a Redis without persistence comes back) while two replicas
// hold every kind of shared state a caller can make them hold: a backend's MRTR round asked, a
// form confirmation asked, an approval-page call pending, a pre-2026 session (go-sdk client at
// 2025-11-25, its requests spread over both replicas) with a resource subscription and an open
// GET stream, rate-limit buckets. While Redis is down each caller gets what docs/scaling.md
// ("When Redis is unreachable") says: 503 -32014 with Retry-After where single use needs the
// store, nothing of it forwarded; fail-open rate limits; the backend round, the pre-2026
// session's calls and its GET stream go on; /readyz 503 naming redis. Afterwards everything
// works again without restarting a gateway: /readyz and the breaker's gauge recover, a
// confirmation asked before is asked again rather than taken (the store forgot its use), a new
// one is taken once across the replicas, the pending page call is asked again, and nothing is
// answered twice.
func TestRedisRestartedUnderTraffic(t *testing.T) {
	iss := newIssuer(t)
	rs := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
	sets := listenSets(alpha)
	start := func() Listeners {
		return startTestGateway(t, func(c *Config) {
			redisBackedCalls(c, iss, rs.URL(),
				authz.RuleConfig{ID: "page", Upstream: "alpha", Tools: []string{"whoami"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmURL},
				authz.RuleConfig{ID: "resources", Upstream: "alpha", Resources: []string{"*"}, AnyScope: []string{"tools:use"}})
			c.Approval.ClientID = "gateway-approval"
			c.Redis.Breaker = store.RedisBreaker{Cooldown: 50 * time.Millisecond}
		}, alpha)
	}
	a, b := start(), start()
	replicas := []Listeners{a, b}
	alice := mintFor(t, iss, "alice")

	// Before: every kind of state is made.
	updates := &mcptest.ResourceUpdates{}
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	legacy := mcptest.Connect(t, "http://"+a.MCP+"/mcp", mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithBearer(alice),
		mcptest.WithResourceUpdated(updates.Handler), mcptest.WithRoundTripper(&alternate{base: base, hosts: []string{a.MCP, b.MCP}}))
	if err := legacy.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "alpha+" + mcptest.ResourceReadme}); err != nil {
		t.Fatal(err)
	}
	waitListen(t, sets, mcptest.ResourceReadme)
	hearsOf(t, alpha, updates, mcptest.ResourceReadme, "with Redis up")
	_, round := rawCall(t, a, alice, "alpha__ask_name", `{}`, "")
	if round.Result.ResultType != "input_required" || round.Result.RequestState == "" {
		t.Fatalf("ask_name: %+v", round)
	}
	named := `,"inputResponses":{"name":{"action":"accept","content":{"name":"Eve"}}},"requestState":"` + round.Result.RequestState + `"`
	confirmation := askEchoConfirmation(t, a, alice)
	_, page := callWithMeta(t, a, alice, urlElicitMeta, "alpha__whoami", `{}`, "")
	if page.Result.ResultType != "input_required" || page.Result.RequestState == "" {
		t.Fatalf("approval page: %+v", page)
	}
	for _, gw := range replicas {
		if status, r := rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, ""); status != 200 || r.Error != nil {
			t.Fatalf("a rate-limited call with Redis up: %d %+v", status, r)
		}
	}

	const storeDown = `mcp_gateway_mrtr_events_total{event="rejected",reason="store_unavailable"}`
	storeDown0 := metricValue(t, b, storeDown)
	rs.Stop()
	alpha.Reset()
	t.Run("while Redis is down", func(t *testing.T) {
		for _, gw := range replicas {
			// The notices check too: a replica is not ready again before Redis has confirmed its
			// notice subscriptions anew, or the first notices after the restart are lost.
			// The subscription learns of the lost connection by itself, moments after: polled.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				status, body := readyz(t, gw)
				if status == http.StatusServiceUnavailable && !body.Ready && body.Checks["redis"] != "ok" && body.Checks["redis"] != "" &&
					body.Checks["notices"] != "ok" && body.Checks["notices"] != "" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("/readyz with Redis stopped: %d %+v, want 503 naming redis and notices", status, body)
				}
			}
		}
		answerFailsClosed(t, b, alice, confirmation, "with Redis stopped")
		if got := metricValue(t, b, storeDown) - storeDown0; got != 1 {
			t.Errorf("%s grew by %v for the confirmation refused with Redis stopped, want 1", storeDown, got)
		}
		if status, after, r := retryPage(t, b, alice, page.Result.RequestState); status != 503 || after != "1" || r.Error == nil || r.Error.Code != -32014 {
			t.Errorf("the approval-page call retried with Redis stopped: %d, Retry-After %q, %+v", status, after, r.Error)
		}
		if status, r := rawCall(t, b, alice, "alpha__ask_name", `{}`, named); status != 200 || r.Error != nil || len(r.Result.Content) == 0 || r.Result.Content[0].Text != "Hello, Eve" {
			t.Errorf("the backend's round answered with Redis stopped: %d %+v, want it served (a round without approval needs no store)", status, r)
		}
		for _, gw := range replicas {
			if status, r := rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, ""); status != 200 || r.Error != nil {
				t.Errorf("a rate-limited call with Redis stopped: %d %+v, want fail-open 200", status, r)
			}
		}
		if res, err := legacy.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil || res.IsError {
			t.Errorf("the pre-2026 session's call with Redis stopped: %+v %v", res, err)
		}
		// As the 2026-07-28 edge answers a request the store cannot carry: 503 with Retry-After,
		// which the go-sdk client takes as transient, keeping its session.
		unavailable := http.StatusText(http.StatusServiceUnavailable)
		if err := legacy.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "alpha+mem://items/alpha"}); err == nil || !strings.Contains(err.Error(), unavailable) {
			t.Errorf("a pre-2026 subscribe with Redis stopped: %v, want 503", err)
		}
		if err := legacy.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "alpha+" + mcptest.ResourceReadme}); err == nil || !strings.Contains(err.Error(), unavailable) {
			t.Errorf("a pre-2026 unsubscribe with Redis stopped: %v, want 503", err)
		}
		if err := legacy.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err == nil || !strings.Contains(err.Error(), unavailable) {
			t.Errorf("a pre-2026 logging/setLevel with Redis stopped: %v, want 503", err)
		}
		for _, gw := range replicas {
			raw := legacyclient.Raw{Token: alice, Protocol: "2025-11-25"}
			r := raw.Post(t, "http://"+gw.MCP+"/mcp", legacy.ID(), `{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"debug"}}`)
			if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" || !strings.Contains(r.Body, `"code":-32014`) {
				t.Errorf("a pre-2026 logging/setLevel by hand with Redis stopped: %v, Retry-After %q, want 503 -32014 with Retry-After 1",
					r, r.Header.Get("Retry-After"))
			}
		}
		hearsOf(t, alpha, updates, mcptest.ResourceReadme, "with Redis stopped")
		if got := calledTools(alpha); !slices.Equal(got, []string{"ask_name", "add", "add", "add"}) {
			t.Errorf("the backend received %v with Redis stopped, want only the round and the fail-open calls", got)
		}
	})

	rs.Restart()
	for _, gw := range replicas {
		waitReady(t, gw)
	}
	t.Run("after Redis is back", func(t *testing.T) {
		alpha.Reset()
		for _, gw := range replicas {
			if s := metricValue(t, gw, "mcp_gateway_redis_circuit_state"); s != float64(store.BreakerClosed) {
				t.Errorf("mcp_gateway_redis_circuit_state after the restart: %v, want closed", s)
			}
		}
		// The restarted store forgot which confirmations were used: one asked before it began
		// is asked again (400 -32602), never taken.
		if status, r := rawCall(t, a, alice, "alpha__echo", `{"text":"pay 10"}`, approve(confirmation)); status != 400 || r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("a confirmation asked before the restart, answered after: %d %+v, want 400 -32602", status, r)
		}
		// Asked afresh, with a new page: the old one no longer knows the call.
		before := page.Result.InputRequests["io.mcp-gateway/confirm"].Params.URL
		if status, _, r := retryPage(t, b, alice, page.Result.RequestState); status != 200 || r.Result.ResultType != "input_required" ||
			r.Result.InputRequests["io.mcp-gateway/confirm"].Params.Mode != "url" || r.Result.InputRequests["io.mcp-gateway/confirm"].Params.URL == before {
			t.Errorf("the approval-page call retried after the restart: %d %+v, want asked again with a new page", status, r)
		}
		if got := calledTools(alpha); len(got) != 0 {
			t.Errorf("the backend received %v for states of before the restart", got)
		}
		answerTakenOnce(t, b, alice, alpha, askEchoConfirmation(t, a, alice), "asked and answered after the restart")
		const limitErrors = `mcp_gateway_rate_limit_decisions_total{decision="error"}`
		for _, gw := range replicas {
			before := metricValue(t, gw, limitErrors)
			if status, r := rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, ""); status != 200 || r.Error != nil {
				t.Errorf("a rate-limited call after the restart: %d %+v", status, r)
			}
			if got := metricValue(t, gw, limitErrors) - before; got != 0 {
				t.Errorf("%s grew by %v after the restart, want the limit checked", limitErrors, got)
			}
		}
		hearsOf(t, alpha, updates, mcptest.ResourceReadme, "after the restart")
		if err := legacy.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "alpha+mem://items/beta"}); err != nil {
			t.Fatalf("a pre-2026 subscribe after the restart: %v", err)
		}
		set := waitListen(t, sets, "mem://items/beta")
		t.Run("the session's subscription made before the restart is kept", func(t *testing.T) {
			// The session's record is gone with the store's memory, so the next change writes a
			// set without it; the replica holding the GET stream still has it and writes it back.
			if !slices.Contains(set, mcptest.ResourceReadme) {
				t.Errorf("after the restart the session's GET stream listens to %v: its subscription to %s is lost", set, mcptest.ResourceReadme)
			}
		})
	})
}
