package gateway

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// metricValue reads one sample from the admin listener's /metrics; series is the metric name
// with its labels as exposed (e.g. `mcp_gateway_redis_errors_total{op="rate_limit"}`). A
// missing series reads as 0.
func metricValue(t *testing.T, gw Listeners, series string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(get(t, "http://"+gw.Admin+"/metrics")))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if ok && name == series {
			v, err := strconv.ParseFloat(val, 64)
			if err != nil {
				t.Fatalf("%s: %v", series, err)
			}
			return v
		}
	}
	return 0
}

// TestRedisPausedFailsFast: with Redis hung (SIGSTOP), a fail-open rate limit must not turn
// into an outage. After the breaker's few failures every rate-limited call is admitted without
// asking Redis (counted as skipped), a confirmation is still refused (503, backend not
// reached), and after SIGCONT the breaker closes and both work again.
func TestRedisPausedFailsFast(t *testing.T) {
	iss := newIssuer(t)
	redis := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	const cooldown = 2 * time.Second
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "echo-confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			{ID: "rest", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}, RateLimit: "100000/m"},
		}
		c.Redis.URL = redis.URL()
		c.Redis.ReadTimeout, c.Redis.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
		c.Redis.Breaker = store.RedisBreaker{Failures: 3, Cooldown: cooldown}
		// Exact limits: every call asks Redis, which is what the breaker is about (a leased
		// budget would serve the first calls locally while Redis hangs).
		c.RateLimit.Lease = 1
	}, alpha)
	alice := mintFor(t, iss, "alice")
	add := func() (int, rpcResult) { return rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, "") }
	ask := func() string {
		_, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, "")
		if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
			t.Fatalf("expected a confirmation, got %+v", r)
		}
		return r.Result.RequestState
	}
	const errorsSeries = `mcp_gateway_redis_errors_total{op="rate_limit"}`
	if status, r := add(); status != 200 || r.Error != nil {
		t.Fatalf("with Redis up: %d %+v", status, r)
	}
	state := ask()

	redis.Pause()
	// The first calls wait for Redis and fail open; then the breaker opens.
	for i := range 3 {
		if status, r := add(); status != 200 || r.Error != nil {
			t.Fatalf("call %d with Redis paused: %d %+v, want fail-open 200", i, status, r)
		}
	}
	if s := metricValue(t, gw, "mcp_gateway_redis_circuit_state"); s != float64(store.BreakerOpen) {
		t.Fatalf("circuit state after 3 failures = %v, want %d (open)", s, store.BreakerOpen)
	}
	errs0, skipped0 := metricValue(t, gw, errorsSeries), metricValue(t, gw, "mcp_gateway_redis_skipped_total")
	// The README's table says where a fail-open admission is counted.
	const failOpenSeries = `mcp_gateway_rate_limit_decisions_total{decision="error"}`
	failOpen0 := metricValue(t, gw, failOpenSeries)
	alpha.Reset()
	const n = 30
	start := time.Now()
	for i := range n {
		if status, r := add(); status != 200 || r.Error != nil {
			t.Fatalf("call %d with the breaker open: %d %+v, want fail-open 200", i, status, r)
		}
	}
	elapsed := time.Since(start)
	if got := toolCalls(alpha); got != n {
		t.Fatalf("backend got %d calls, want %d (fail open)", got, n)
	}
	errs, skipped := metricValue(t, gw, errorsSeries)-errs0, metricValue(t, gw, "mcp_gateway_redis_skipped_total")-skipped0
	// Each call's rate-limit check failed (errors) and, but for at most one half-open probe
	// per cooldown, did so without sending anything to Redis (skipped).
	probes := errs - skipped
	if errs != n || probes < 0 || probes > 1+float64(elapsed/cooldown) {
		t.Fatalf("of %d checks: %v failed, %v skipped; want all failed and at most %d sent to Redis",
			n, errs, skipped, 1+int(elapsed/cooldown))
	}
	t.Logf("%d fail-open calls with Redis paused in %v (%v Redis attempts)", n, elapsed, probes)

	// Confirmations stay strictly fail-closed, counted as docs/scaling.md says.
	const storeDown = `mcp_gateway_mrtr_events_total{event="rejected",reason="store_unavailable"}`
	storeDown0 := metricValue(t, gw, storeDown)
	alpha.Reset()
	status, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state))
	if status != 503 || r.Error == nil || r.Error.Code != -32014 {
		t.Fatalf("approval with the breaker open: %d %+v, want 503 -32014", status, r)
	}
	if toolCalls(alpha) != 0 {
		t.Fatal("a confirmation was admitted without the store")
	}
	if got := metricValue(t, gw, storeDown) - storeDown0; got != 1 {
		t.Errorf("%s grew by %v for one refused confirmation, want 1", storeDown, got)
	}
	if got := metricValue(t, gw, failOpenSeries) - failOpen0; got != n {
		t.Errorf("%s grew by %v over %d fail-open calls", failOpenSeries, got, n)
	}
	// The README promises a retry hint of one second when single use cannot be recorded.
	h := modernHeaders("tools/call", "alpha__echo")
	h.Set("Authorization", "Bearer "+alice)
	status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", h,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+elicitMeta+`,"name":"alpha__echo","arguments":{"text":"pay 10"}`+approve(state)+`}}`)
	if status != 503 || hdr.Get("Retry-After") != "1" || toolCalls(alpha) != 0 {
		t.Fatalf("approval with the breaker open: %d, Retry-After %q, backend calls %d: %.200s", status, hdr.Get("Retry-After"), toolCalls(alpha), body)
	}

	redis.Resume()
	deadline := time.Now().Add(30 * time.Second)
	for metricValue(t, gw, "mcp_gateway_redis_circuit_state") != float64(store.BreakerClosed) {
		if time.Now().After(deadline) {
			t.Fatal("the breaker did not close after Redis resumed")
		}
		add()
		time.Sleep(100 * time.Millisecond)
	}
	errs0 = metricValue(t, gw, errorsSeries)
	for i := range 5 {
		if status, r := add(); status != 200 || r.Error != nil {
			t.Fatalf("call %d after Resume: %d %+v", i, status, r)
		}
	}
	if got := metricValue(t, gw, errorsSeries) - errs0; got != 0 {
		t.Fatalf("%v rate-limit store errors after recovery, want 0", got)
	}
	alpha.Reset()
	if _, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)); r.Error != nil || r.Result.IsError {
		t.Fatalf("approval after recovery: %+v", r)
	}
	if toolCalls(alpha) != 1 {
		t.Fatalf("backend got %d calls for the approval, want 1", toolCalls(alpha))
	}
}

// TestRateLimitFailClosed: with rateLimit.failClosed a rate-limited call whose limit Redis
// cannot check (here Redis has stopped) is refused with 503 -32014 and Retry-After: 1, never
// forwarded and counted as a store error, as the README's table of what fails how says; a call
// no limit covers is still served.
func TestRateLimitFailClosed(t *testing.T) {
	iss := newIssuer(t)
	redis := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "limited", Upstream: "alpha", Tools: []string{"add"}, AnyScope: []string{"tools:use"}, RateLimit: "100000/m"},
			{ID: "rest", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}},
		}
		c.Redis.URL = redis.URL()
		c.Redis.DialTimeout, c.Redis.ReadTimeout = 300*time.Millisecond, 300*time.Millisecond
		c.RateLimit.FailClosed = true
		c.RateLimit.Lease = 1
	}, alpha)
	alice := mintFor(t, iss, "alice")
	if status, r := rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, ""); status != 200 || r.Error != nil {
		t.Fatalf("with Redis up: %d %+v", status, r)
	}
	redis.Stop()
	alpha.Reset()
	const failed = `mcp_gateway_rate_limit_decisions_total{decision="error"}`
	before := metricValue(t, gw, failed)
	h := modernHeaders("tools/call", "alpha__add")
	h.Set("Authorization", "Bearer "+alice)
	status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", h,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+elicitMeta+`,"name":"alpha__add","arguments":{"a":1,"b":2}}}`)
	if status != 503 || hdr.Get("Retry-After") != "1" || !strings.Contains(body, `"code":-32014`) {
		t.Fatalf("a limited call with Redis stopped: %d, Retry-After %q: %.200s", status, hdr.Get("Retry-After"), body)
	}
	if toolCalls(alpha) != 0 {
		t.Fatal("a call whose rate limit could not be checked was forwarded")
	}
	if got := metricValue(t, gw, failed) - before; got != 1 {
		t.Errorf("%s grew by %v, want 1", failed, got)
	}
	if status, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"x"}`, ""); status != 200 || r.Error != nil {
		t.Errorf("a call no limit covers, with Redis stopped: %d %+v", status, r)
	}
}
