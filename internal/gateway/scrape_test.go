package gateway

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/embedtest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/promcheck"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestMetricsScrapeCoversShippedFiles drives a gateway configured like production (issuers, one
// of them down, Redis, a 2026 backend pinned in a lock file that then lists a tool it did not
// have, a pre-2026 backend, a backend that answers garbage and one that is gone, confirmations
// on the form and on the approval page, rate limits, a search endpoint with an embeddings endpoint behind it) with representative
// traffic from 2026-07-28 and pre-2026 clients, pauses Redis for one call, and scrapes
// /metrics. Every metric, label and grouping label the shipped alert rules and dashboard use
// must be in that scrape, every input series of the rules' promtool tests must be one of its
// series, no gateway label value is empty, and a backend is labelled upstream everywhere.
func TestMetricsScrapeCoversShippedFiles(t *testing.T) {
	s := scrapeServedGateway(t)
	root := filepath.Join("..", "..")
	rules, err := promcheck.LoadRules(filepath.Join(root, promcheck.RulesFile))
	if err != nil {
		t.Fatal(err)
	}
	dash, err := promcheck.DashboardExprs(filepath.Join(root, promcheck.DashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := promcheck.LoadRuleTests(root)
	if err != nil {
		t.Fatal(err)
	}
	exprs := append(promcheck.RuleExprs(rules), dash...)
	if len(exprs) < 40 || len(tests.Tests) == 0 {
		t.Fatalf("%d queries and %d promtool tests read: the files were not found whole", len(exprs), len(tests.Tests))
	}
	for _, e := range exprs {
		for _, err := range s.CheckQuery(e) {
			t.Error(err)
		}
	}
	for _, err := range s.CheckInputSeries(tests) {
		t.Error(err)
	}
	if empty := s.EmptyLabelValues(promcheck.Prefix); len(empty) > 0 {
		t.Errorf("series with an empty label value (reads as an absent label in PromQL): %v", empty)
	}
	for _, f := range s.Families() {
		// docs/observability.md: every metric of the gateway is under the prefix; the rest are
		// the Go runtime and process collectors.
		if !strings.HasPrefix(f, promcheck.Prefix) && !strings.HasPrefix(f, "go_") && !strings.HasPrefix(f, "process_") {
			t.Errorf("%s is neither under %s nor a runtime or process metric", f, promcheck.Prefix)
		}
		if slices.Contains(s.LabelNames(f), "backend") {
			t.Errorf("%s labels a backend \"backend\"; every other series says upstream", f)
		}
	}
	checkREADMEMetrics(t, s, filepath.Join(root, "README.md"))
	checkDocumentedLabelValues(t, s, root)
}

// checkDocumentedLabelValues: the label values the documents list for the counters exported at
// 0 from start (so the scrape holds every one) are values the gateway exports: a query or alert
// written from the docs matches a real series.
func checkDocumentedLabelValues(t *testing.T, s promcheck.Scrape, root string) {
	t.Helper()
	value := regexp.MustCompile("`([a-z_]+)`")
	for _, c := range []struct {
		doc, span     string // span: a regexp whose first group holds the listed values
		metric, label string
		atLeast       int
	}{
		{"docs/observability.md", "`mcp_gateway_auth_failures_total\\{reason=…\\}` \\(([^)]*)\\)", "mcp_gateway_auth_failures_total", "reason", 10},
		{"docs/observability.md", "(?m)^\\| `mcp_gateway_approval_refusals_total` \\| `reason`: ([^|]*)\\|", "mcp_gateway_approval_refusals_total", "reason", 12},
		{"docs/approval.md", "(?m)^\\| `mcp_gateway_approval_refusals_total` \\| `reason`: ([^|]*)\\|", "mcp_gateway_approval_refusals_total", "reason", 12},
		{"README.md", "(?m)^\\| `mcp_gateway_redis_errors_total` \\|[^|]*\\|[^|]*\\| shared-store failures \\(([^)]*)\\)", "mcp_gateway_redis_errors_total", "op", 6},
		{"README.md", "(?m)^\\| `mcp_gateway_listen_notifications_dropped_total` \\|[^|]*\\|[^|]*\\|[^(]*\\(([^)]*)\\)", "mcp_gateway_listen_notifications_dropped_total", "cause", 4},
	} {
		raw, err := os.ReadFile(filepath.Join(root, c.doc))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(c.span).FindStringSubmatch(string(raw))
		if m == nil {
			t.Errorf("%s no longer lists the values of %s in the form this test reads", c.doc, c.metric)
			continue
		}
		values := value.FindAllStringSubmatch(m[1], -1)
		if len(values) < c.atLeast {
			t.Errorf("%s: read %d values of %s{%s}, want at least %d", c.doc, len(values), c.metric, c.label, c.atLeast)
		}
		for _, v := range values {
			if v[1] == "list_changed" { // "passing a `list_changed` on": prose, not a value
				continue
			}
			if !s.HasSeries(c.metric, map[string]string{c.label: v[1]}) {
				t.Errorf("%s lists %s{%s=%q}, which the gateway does not export", c.doc, c.metric, c.label, v[1])
			}
		}
	}
}

// checkREADMEMetrics holds the README's metrics table to the scrape: every gateway family the
// scrape holds is a row with its type and exactly its labels, and every row is in the scrape
// (but for the in-memory store's, which a gateway with Redis does not have).
func checkREADMEMetrics(t *testing.T, s promcheck.Scrape, readme string) {
	t.Helper()
	raw, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(mcp_gateway_[a-z0-9_]+)` \\| (counter|gauge|histogram) \\|\\s*([a-z_, ]*?)\\s*\\|")
	rows := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(raw), -1) {
		labels := strings.Split(strings.ReplaceAll(m[3], " ", ""), ",")
		slices.Sort(labels)
		rows[m[1]] = m[2] + " " + strings.Join(labels, ",")
	}
	for _, f := range s.Families() {
		if !strings.HasPrefix(f, promcheck.Prefix) {
			continue
		}
		labels := s.LabelNames(f)
		if labels == nil {
			labels = []string{""}
		}
		slices.Sort(labels)
		if want := s.Type(f) + " " + strings.Join(labels, ","); rows[f] != want {
			t.Errorf("README metrics table: %s is %q, the scrape says %q", f, rows[f], want)
		}
	}
	for f := range rows {
		if !s.Has(f) && f != "mcp_gateway_store_full_total" {
			t.Errorf("README metrics table lists %s, which the gateway does not export", f)
		}
	}
}

// scrapeServedGateway runs the traffic described on TestMetricsScrapeCoversShippedFiles and
// returns the scrape.
func scrapeServedGateway(t *testing.T) promcheck.Scrape {
	t.Helper()
	iss, down := newIssuer(t), newIssuer(t)
	redis := testredis.Start(t)
	alpha := mcptest.StartServer(t, "alpha")
	beta := mcptest.StartLegacyServer(t, "beta")
	odd := startOutcomeBackend(t)
	lock := pinLock(t, alpha)
	alpha.MCP().AddTool(&mcp.Tool{Name: "extra", Description: "Listed after the pins were written.",
		InputSchema: map[string]any{"type": "object"}}, noopTool)
	alice, downTok := mintFor(t, iss, "alice"), mintFor(t, down, "mallory")
	down.SetDown(true)
	gw := startTestGateway(t, func(c *Config) {
		scrapeConfig(t, c, iss.URL(), down.URL(), redis.URL(), odd.srv.URL)
		// beta lists the same tools as alpha (both are the SDK's default server), and a
		// backend whose pinning is off is still held to shadowing: its copies are listed, and
		// counted as drift, rather than blocked.
		c.Pins = &pins.Config{Mode: pins.ModeOff, LockFile: lock,
			Backends: map[string]pins.BackendConfig{"alpha": {Mode: pins.ModeLockfile},
				"beta": {Actions: map[pins.Class]pins.Action{pins.ClassShadows: pins.ActionLog}}}}
	}, alpha, beta)

	modernTraffic(t, gw, alice, downTok)
	legacy := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithBearer(alice),
		mcptest.WithElicitation(mcptest.Accept(map[string]any{"approve": true})))
	for _, name := range []string{"alpha__echo", "beta__echo"} {
		// beta's echo carries an address the guardrails log (and the backend echoes back).
		if res, err := legacy.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "hi ops@example.com"}}); err != nil || res.IsError {
			t.Fatalf("pre-2026 %s: %v %+v", name, err, res)
		}
	}
	searchTraffic(t, gw, alice)

	state := askConfirmation(t, gw, alice)
	redis.Pause()
	rawCall(t, gw, alice, "alpha__add", `{"a":1,"b":2}`, "")                  // rate limit check fails
	rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)) // single use cannot be checked
	approvalStoreDown(t, gw, alice, alpha)
	redis.Resume()

	res, err := http.Get("http://" + gw.Admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	s, err := promcheck.ParseScrape(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// approvalStoreDown asks for a confirm: url call while the store does not answer: docs/scaling.md
// promises 503 -32014 "Approval store unavailable" with Retry-After: 1, and nothing forwarded.
func approvalStoreDown(t *testing.T, gw Listeners, tok string, alpha *mcptest.Server) {
	t.Helper()
	alpha.Reset()
	h := modernHeaders("tools/call", "alpha__whoami")
	h.Set("Authorization", "Bearer "+tok)
	status, hdr, body := post(t, "http://"+gw.MCP+"/mcp", h,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+urlElicitMeta+`,"name":"alpha__whoami","arguments":{}}}`)
	if status != 503 || hdr.Get("Retry-After") != "1" || !strings.Contains(body, `"code":-32014`) ||
		!strings.Contains(body, "Approval store unavailable") || toolCalls(alpha) != 0 {
		t.Errorf("approval asked with the store down: %d, Retry-After %q, backend calls %d: %.200s",
			status, hdr.Get("Retry-After"), toolCalls(alpha), body)
	}
}

// scrapeConfig is the production-like configuration of scrapeServedGateway.
func scrapeConfig(t *testing.T, c *Config, issuer, downIssuer, redisURL, oddURL string) {
	c.Auth.Disabled = false
	c.Server.PublicURL = testResource
	c.Auth.Issuers = []authz.IssuerConfig{{Issuer: issuer}, {Issuer: downIssuer}}
	c.MRTR.Keys = testKeys
	c.Redis.URL = redisURL
	c.Redis.ReadTimeout, c.Redis.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	c.Redis.Breaker = store.RedisBreaker{Failures: 100, Cooldown: time.Second}
	c.RateLimit.Lease = 1 // every call asks Redis
	for _, u := range []struct{ name, url string }{{"odd", oddURL + "/mcp"}, {"gone", "http://" + closedPort(t) + "/mcp"}} {
		var uc UpstreamConfig
		uc.Name, uc.URL, uc.Protocol, uc.Timeout = u.name, u.url, upstreams.ProtocolVersion, 5*time.Second
		c.Upstreams = append(c.Upstreams, uc)
	}
	// A backend whose callers connect their own accounts (per-user OAuth), which no caller has
	// connected: its refresh and consent series exist from start, at 0.
	var notes UpstreamConfig
	notes.Name, notes.URL, notes.Protocol, notes.Timeout = "notes", "http://"+closedPort(t)+"/mcp", upstreams.ProtocolVersion, 5*time.Second
	notes.Auth.Type, notes.Auth.ClientID = upstreams.AuthUserOAuth, "gateway-notes"
	c.Upstreams = append(c.Upstreams, notes)
	c.UserOAuth.Keys = []KeyConfig{{ID: "v1", Secret: Secret{Value: "a-test-only-vault-key-of-at-least-32-bytes"}}}
	use := []string{"tools:use"}
	rules := []authz.RuleConfig{
		{ID: "confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: use, Confirm: authz.ConfirmForm},
		{ID: "page", Upstream: "alpha", Tools: []string{"whoami"}, AnyScope: use, Confirm: authz.ConfirmURL},
		{ID: "limited", Upstream: "alpha", Tools: []string{"add"}, AnyScope: use, RateLimit: "100000/m"},
		{ID: "alpha", Upstream: "alpha", Tools: []string{"*"}, AnyScope: use},
		{ID: "beta", Upstream: "beta", Tools: []string{"*"}, AnyScope: use},
		{ID: "odd", Upstream: "odd", Tools: []string{"*"}, AnyScope: use},
		{ID: "gone", Upstream: "gone", Tools: []string{"*"}, AnyScope: use},
	}
	for i := range rules {
		rules[i].Issuers = []string{"*"}
	}
	c.Auth.Policy.Rules = rules
	c.Approval.ClientID, c.Approval.Issuer = "gateway-approval", issuer
	c.Toolsets = []mcphttp.ToolsetConfig{{Name: "search", Include: []mcphttp.SelectorConfig{{}},
		Search: mcphttp.SearchConfig{Enabled: true}}}
	// An embeddings endpoint behind the search (the stand-in): its series exist only when set.
	c.Search.Embeddings = EmbeddingsConfig{Config: embeddings.Config{URL: embedtest.Start(t, "").URL, Model: "stand-in"}}
	// An interceptor that cannot be reached, fail-open, on odd's calls: its series without
	// changing what those calls do.
	c.Interceptors = []InterceptorConfig{{Config: intercept.Config{Name: "unreachable", URL: "http://" + closedPort(t) + "/mcp",
		Type: intercept.TypeValidation, FailOpen: true, Rules: []intercept.RuleConfig{{Upstream: "odd", Tools: []string{"*"}}}}}}
	// Guardrails that only log, on beta's calls: their series without changing what those calls do.
	c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "watch", Upstream: "beta", Tools: []string{"*"},
		Validate:  guardrails.ValidateConfig{Arguments: "log"},
		Arguments: guardrails.DirectionConfig{PII: "log"}, Results: guardrails.DirectionConfig{PII: "log"}}}}
}

// modernTraffic: 2026-07-28 calls ending in every outcome the alerts read, failed tokens, a
// tampered confirmation and an approval asked on the page.
func modernTraffic(t *testing.T, gw Listeners, alice, downTok string) {
	t.Helper()
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(alice),
		mcptest.WithElicitation(func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if strings.Contains(req.Params.Message, "name") {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		}))
	_ = toolNames(t, cs)
	for name, args := range map[string]map[string]any{
		"alpha__echo": {"text": "hi"}, "alpha__ask_name": {}, "alpha__add": {"a": 1, "b": 2},
	} {
		if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args}); err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	for name, want := range map[string]int{"odd__reject": 200, "odd__garbage": 502, "gone__ok": 502, "alpha__extra": 403} {
		if status, _ := rawCall(t, gw, alice, name, `{}`, ""); status != want {
			t.Errorf("%s: %d, want %d", name, status, want)
		}
	}
	for tok, want := range map[string]int{"": 401, alice[:len(alice)-4] + "AAAA": 401, downTok: 503} {
		if status, _ := rawCall(t, gw, tok, "alpha__add", `{"a":1,"b":2}`, ""); status != want {
			t.Errorf("token %.12s...: %d, want %d", tok, status, want)
		}
	}
	state := askConfirmation(t, gw, alice)
	if status, _ := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(tamper(state))); status != 400 {
		t.Errorf("tampered requestState: %d, want 400", status)
	}
	if _, r := callWithMeta(t, gw, alice, urlElicitMeta, "alpha__whoami", `{}`, ""); r.Result.ResultType != "input_required" {
		t.Errorf("confirm: url call: %+v", r)
	}
}

// searchTraffic: find_tools and call_tool on the search endpoint.
func searchTraffic(t *testing.T, gw Listeners, alice string) {
	t.Helper()
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp/search", mcptest.WithBearer(alice))
	_ = toolNames(t, cs)
	if got := findTools(t, cs, "add two integers"); len(got) == 0 {
		t.Error("find_tools found nothing")
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": "alpha__add", "arguments": map[string]any{"a": 2, "b": 5}}})
	if err != nil || mcptest.ResultText(res) != "7" {
		t.Errorf("call_tool: %v %+v", err, res)
	}
}

// askConfirmation asks for alpha__echo's confirmation and returns its requestState.
func askConfirmation(t *testing.T, gw Listeners, tok string) string {
	t.Helper()
	_, r := rawCall(t, gw, tok, "alpha__echo", `{"text":"pay 10"}`, "")
	if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("expected a confirmation, got %+v", r)
	}
	return r.Result.RequestState
}
