package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// The 2025-03-26 clients (internal/testsupport/legacyclient: the TypeScript SDK 1.12.3, whose
// latest version is 2025-03-26, and mcp-remote 0.1.13 driven over stdio as a desktop host drives
// it) against two targets: "direct", a go-sdk server serving 2025-03-26 itself with sessions and
// batches, which proves the harness; and "gateway", the gateway with real tokens in front of a
// 2026-07-28 backend, with a confirmation policy (which 2025-03-26 cannot answer) and a tool
// the caller may not call.
//
//	go test -race -count=1 -run 'TestLegacy0326Clients' ./internal/gateway

// target0326 is one endpoint the 2025-03-26 clients run against.
type target0326 struct {
	url      string
	token    func(t *testing.T) string
	sc       legacyclient.Scenario0326
	deploys  *atomic.Int64
	refusing bool // the target refuses the confirm step and holds results to 2025-03-26 (the gateway)
}

func directTarget0326(t *testing.T) *target0326 {
	deploys := &atomic.Int64{}
	srv := mcptest.StartLegacyServer(t, "alpha", legacyclient.DeployTool(deploys))
	return &target0326{url: srv.URL(), token: func(*testing.T) string { return "" }, deploys: deploys,
		sc: legacyclient.Scenario0326{URL: srv.URL(), Prompt: mcptest.PromptGreet,
			Tools: legacyclient.Tools0326{Echo: mcptest.ToolEcho, Progress: mcptest.ToolProgress, Add: mcptest.ToolAdd, Denied: "nope"},
			// The reference asks nothing before a deploy: there is nothing to refuse there.
			Steps: without(legacyclient.AllSteps0326(), "confirm")}}
}

func gatewayTarget0326(t *testing.T) *target0326 {
	deploys := &atomic.Int64{}
	alpha := mcptest.StartServer(t, "alpha", legacyclient.DeployTool(deploys))
	gw := legacyGateway(t, nil, func(c *Config) {
		// No rule grants fail: refused, and answered on its own in a batch.
		c.Auth.Policy.Rules = rules0326()
	}, alpha)
	return &target0326{url: gw.url(), token: func(t *testing.T) string { return mintFor(t, gw.iss, "alice") },
		deploys: deploys, refusing: true,
		sc: legacyclient.Scenario0326{URL: gw.url(), Prompt: "alpha__" + mcptest.PromptGreet,
			Tools: legacyclient.Tools0326{Echo: "alpha__echo", Progress: "alpha__progress", Add: "alpha__add",
				Confirm: "alpha__" + legacyclient.ToolDeploy, Denied: "alpha__fail"}}}
}

// rules0326 is the policy of the 2025-03-26 tests: deploy needs the user's confirmation, echo,
// progress and add are allowed, and no rule grants fail.
func rules0326() []authz.RuleConfig {
	return []authz.RuleConfig{
		{ID: "deploy-confirm", Upstream: "alpha", Tools: []string{legacyclient.ToolDeploy}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
		{ID: "rest", Upstream: "*", Tools: []string{mcptest.ToolEcho, mcptest.ToolProgress, mcptest.ToolAdd}, Prompts: []string{"*"},
			Resources: []string{"**"}, AnyScope: []string{"tools:use"}},
	}
}

func without(steps []string, drop string) []string {
	out := steps[:0:0]
	for _, s := range steps {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

// TestLegacy0326Clients runs both 2025-03-26 clients through every step against the direct
// reference and the gateway; mcp-remote as a host offering 2025-03-26 and as one offering
// 2024-11-05 (the gateway answers 2025-03-26, which the host accepts).
func TestLegacy0326Clients(t *testing.T) {
	t.Parallel()
	for _, target := range []struct {
		name  string
		start func(*testing.T) *target0326
	}{{"direct", directTarget0326}, {"gateway", gatewayTarget0326}} {
		t.Run(target.name, func(t *testing.T) {
			tg := target.start(t)
			t.Run("typescript-sdk-"+legacyclient.TS0326Version, func(t *testing.T) {
				sc := tg.sc
				sc.Token = tg.token(t)
				before := tg.deploys.Load()
				steps := legacyclient.RunTS0326(t, sc)
				legacyclient.Check0326(t, sc, steps, legacyclient.Expect0326{Version: legacyclient.Protocol20250326,
					ConfirmRefused: tg.refusing, Strict: tg.refusing, Deploys: tg.deploys, DeploysBefore: before})
			})
			for _, host := range []string{"2025-03-26", "2024-11-05"} {
				t.Run("mcp-remote-"+legacyclient.MCPRemoteVersion+"/host-"+host, func(t *testing.T) {
					sc := tg.sc
					sc.Token = tg.token(t)
					if host == "2024-11-05" && target.name == "direct" {
						t.Skip("the go-sdk server answers 2024-11-05 with 2024-11-05 itself")
					}
					before := tg.deploys.Load()
					steps := legacyclient.RunMCPRemote(t, sc, host)
					sc.Steps = without(sc.Steps, "batch") // a host's stdio carries no batch
					if len(sc.Steps) == 0 {
						sc.Steps = without(legacyclient.AllSteps0326(), "batch")
					}
					legacyclient.Check0326(t, sc, steps, legacyclient.Expect0326{Version: legacyclient.Protocol20250326,
						ConfirmRefused: tg.refusing, Strict: tg.refusing, Deploys: tg.deploys, DeploysBefore: before})
				})
			}
		})
	}
}

// TestLegacyBatchAsIfAlone: each message of a 2025-03-26 batch is admitted, authorised and
// logged as if it had been sent alone. A caller with four tokens left gets its first batch
// messages served and the rest refused in-band with -32012 (each message took one token; the
// batch itself took none); a call the caller may not make is refused on its own among allowed
// ones; every message has its own access log line, under the batch's request id with its
// position.
func TestLegacyBatchAsIfAlone(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	iss := newIssuer(t)
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		// One message at a time, in the batch's order, so which ones find a token is known.
		c.Legacy.BatchConcurrency = 1
		c.RateLimit.PerCaller = "1/h burst 6"
		c.Auth.Policy.Rules = rules0326()
	}, alpha)
	url := "http://" + gw.MCP + "/mcp"
	alice := &legacyclient.Raw{Token: mintFor(t, iss, "alice"), Protocol: legacyclient.Protocol20250326}
	sid := alice.Initialize(t, url) // initialize and notifications/initialized: two tokens
	call := func(id int, tool, text string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"text":%q}}}`, id, tool, text)
	}
	alpha.Reset()
	r := alice.Post(t, url, sid, "["+strings.Join([]string{
		call(1, "alpha__echo", "one"), call(2, "alpha__fail", "no"), call(3, "alpha__echo", "three"),
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`, call(5, "alpha__echo", "five"), call(6, "alpha__echo", "six"),
	}, ",")+"]")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("batch: %s", r)
	}
	answers := map[string]struct {
		Result json.RawMessage
		Error  *struct{ Code int }
	}{}
	for _, m := range r.Msgs {
		var a struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  *struct{ Code int }
		}
		if err := json.Unmarshal(m, &a); err != nil {
			t.Fatal(err)
		}
		answers[string(a.ID)] = struct {
			Result json.RawMessage
			Error  *struct{ Code int }
		}{a.Result, a.Error}
	}
	served, limited := 0, 0
	for id := 1; id <= 6; id++ {
		a, ok := answers[fmt.Sprint(id)]
		switch {
		case !ok:
			t.Errorf("no answer for id %d: %s", id, r.Body)
		case id == 2 && (a.Error == nil || a.Error.Code == -32012):
			t.Errorf("the call the caller may not make: %+v %s", a.Error, a.Result)
		case a.Error != nil && a.Error.Code == -32012:
			limited++
		case a.Error == nil:
			served++
		}
	}
	// Four tokens for six messages: four served or refused by policy, two rate limited.
	if served != 3 || limited != 2 {
		t.Errorf("%d served, %d rate limited; want 3 and 2 (and fail refused): %s", served, limited, r.Body)
	}
	if n := toolCalls(alpha); n != 2 {
		t.Errorf("the backend got %d calls, want the 2 admitted echo calls", n)
	}
	stop()
	requestID := r.Header.Get("X-Request-Id")
	for n := 1; n <= 6; n++ {
		if !strings.Contains(logs.String(), `"request_id":"`+requestID+"."+fmt.Sprint(n)+`"`) {
			t.Errorf("no access log line of message %d (request id %s.%d)", n, requestID, n)
		}
	}
	// The batch's own line: the HTTP request that carried the messages, under its own id, with
	// no method of its own.
	if !regexp.MustCompile(`"msg":"request","request_id":"` + regexp.QuoteMeta(requestID) + `","method":""`).MatchString(logs.String()) {
		t.Errorf("no access log line of the batch itself (request id %s, empty method)", requestID)
	}
	if strings.Contains(logs.String(), `"text":"one"`) || strings.Contains(logs.String(), `one"}`) {
		t.Error("an argument value reached the log")
	}
}

// TestLegacyBatchNeedsElicitation: a call of a 2025-03-26 client that needs the user's
// confirmation ends with an error naming the revision, in a batch as alone, and never reaches
// the backend.
func TestLegacyBatchNeedsElicitation(t *testing.T) {
	deploys := &atomic.Int64{}
	alpha := mcptest.StartServer(t, "alpha", legacyclient.DeployTool(deploys))
	gw := legacyGateway(t, nil, nil, alpha)
	alice := &legacyclient.Raw{Token: mintFor(t, gw.iss, "alice"), Protocol: legacyclient.Protocol20250326}
	sid := alice.Initialize(t, gw.url())
	deploy := alice.CallBody("alpha__"+legacyclient.ToolDeploy, "go")
	for _, body := range []string{deploy, "[" + deploy + "]"} {
		r := alice.Post(t, gw.url(), sid, body)
		if r.Status != http.StatusOK || !strings.Contains(legacyclient.ResultText(r.Msgs), "MCP 2025-03-26") {
			t.Errorf("%s: %s", body, r)
		}
	}
	if n := deploys.Load(); n != 0 {
		t.Fatalf("deploy ran %d times", n)
	}
}

// TestLegacyBatchInFlight: each message of a batch takes an in-flight slot of its caller as if it
// had been sent alone, so a batch is no way around server.maxConcurrentPerCaller. With one slot,
// of two slow calls served at once one runs and the other is refused in-band with -32012; the
// backend gets one call.
func TestLegacyBatchInFlight(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := legacyGateway(t, nil, func(c *Config) { c.Server.MaxConcurrentPerCaller = 1 }, alpha)
	alice := &legacyclient.Raw{Token: mintFor(t, gw.iss, "alice"), Protocol: legacyclient.Protocol20250326}
	sid := alice.Initialize(t, gw.url())
	alpha.Reset()
	slow := alice.CallArgs("alpha__"+mcptest.ToolSlow, `{"ms":400}`)
	r := alice.Post(t, gw.url(), sid, "["+slow+","+alice.CallArgs("alpha__"+mcptest.ToolSlow, `{"ms":400}`)+"]")
	if r.Status != http.StatusOK || len(r.Msgs) != 2 {
		t.Fatalf("batch: want 200 with 2 answers, got %s", r)
	}
	busy := 0
	for _, m := range r.Msgs {
		var a struct{ Error *struct{ Code int } }
		if err := json.Unmarshal(m, &a); err != nil {
			t.Fatal(err)
		}
		if a.Error != nil && a.Error.Code == -32012 {
			busy++
		}
	}
	if busy != 1 {
		t.Errorf("%d of the two calls were refused for the caller's one slot, want 1: %s", busy, r.Body)
	}
	if n := toolCalls(alpha); n != 1 {
		t.Errorf("the backend got %d calls, want 1", n)
	}
}

// TestLegacy0326NotServed: what serving 2025-03-26 is for. With it left out of legacy.versions
// the gateway offers such a client 2025-06-18, and the 2025-03-26 TypeScript SDK gives up at
// connect, as the hosts that vendored it do.
func TestLegacy0326NotServed(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := legacyGateway(t, nil, func(c *Config) { c.Legacy.Versions = []string{"2025-11-25", "2025-06-18"} }, alpha)
	sc := legacyclient.Scenario0326{URL: gw.url(), Token: mintFor(t, gw.iss, "alice"), Steps: []string{"connect"}}
	s, ran := legacyclient.RunTS0326(t, sc)["connect"]
	if !ran || s.OK || !strings.Contains(s.Error, "2025-06-18") {
		t.Fatalf("connect: want the client to refuse the 2025-06-18 it is offered, got %s", s)
	}
}

// TestLegacy0326ApprovalPage: a `confirm: url` call needs URL-mode elicitation to send its user
// to the approval page, which 2025-03-26 lacks: alone or in a batch it ends with a failed call
// naming the revision, and nothing reaches the backend.
func TestLegacy0326ApprovalPage(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := legacyGateway(t, nil, func(c *Config) {
		c.Auth.Policy.Rules = append([]authz.RuleConfig{
			{ID: "page", Upstream: "alpha", Tools: []string{mcptest.ToolEcho}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmURL},
		}, c.Auth.Policy.Rules...)
		c.Approval.ClientID = "gateway-approval"
	}, alpha)
	alice := &legacyclient.Raw{Token: mintFor(t, gw.iss, "alice"), Protocol: legacyclient.Protocol20250326}
	sid := alice.Initialize(t, gw.url())
	alpha.Reset()
	echo := alice.CallBody("alpha__"+mcptest.ToolEcho, "approve me")
	for _, body := range []string{echo, "[" + echo + "]"} {
		r := alice.Post(t, gw.url(), sid, body)
		if text := legacyclient.ResultText(r.Msgs); r.Status != http.StatusOK || !strings.Contains(text, "requires elicitation") ||
			!strings.Contains(text, "MCP 2025-03-26") {
			t.Errorf("%s: %s", body, r)
		}
	}
	if n := toolCalls(alpha); n != 0 {
		t.Fatalf("the backend got %d calls", n)
	}
}

// TestLegacyDenialsNameTheRevision: a call that needs the user's approval (confirm: url) or
// confirmation (confirm: form) tells a 2025-03-26 client that its revision has no elicitation,
// with server.draftErrors: [denials] as without it: the failed call of the denial envelope must
// not blame the client for not declaring a capability its revision cannot declare, nor tell a
// 2025-03-26 host what to turn on. Alone and in a batch; nothing reaches the backend, and with
// denials on the envelope is there. Likewise a call needing the approval page tells a 2025-06-18
// client (which declared form elicitation, the only mode its revision has) that its revision
// has no URL elicitation, and a 2025-11-25 client that it did not declare it.
func TestLegacyDenialsNameTheRevision(t *testing.T) {
	for _, denials := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "denials"}[denials], func(t *testing.T) {
			alpha := mcptest.StartServer(t, "alpha")
			gw := legacyGateway(t, nil, func(c *Config) {
				c.Auth.Policy.Rules = append([]authz.RuleConfig{
					{ID: "page", Upstream: "alpha", Tools: []string{mcptest.ToolEcho}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmURL},
					{ID: "form", Upstream: "alpha", Tools: []string{mcptest.ToolAdd}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
				}, c.Auth.Policy.Rules...)
				c.Approval.ClientID = "gateway-approval"
				if denials {
					c.Server.DraftErrors = []string{"denials"}
				}
			}, alpha)
			alice := &legacyclient.Raw{Token: mintFor(t, gw.iss, "alice"), Protocol: legacyclient.Protocol20250326}
			sid := alice.Initialize(t, gw.url())
			alpha.Reset()
			echo := alice.CallBody("alpha__"+mcptest.ToolEcho, "approve me")
			add := alice.CallArgs("alpha__"+mcptest.ToolAdd, `{"a":1,"b":2}`)
			for _, body := range []string{echo, add, "[" + echo + "]", "[" + add + "]"} {
				r := alice.Post(t, gw.url(), sid, body)
				text := legacyclient.ResultText(r.Msgs)
				if r.Status != http.StatusOK || !strings.Contains(text, "requires elicitation, which MCP 2025-03-26") ||
					strings.Contains(text, "declare") {
					t.Errorf("%s: %s", body, r)
				}
				if got := strings.Contains(string(r.Body), "io.modelcontextprotocol/authorization"); got != denials {
					t.Errorf("%s: envelope %v, want %v: %s", body, got, denials, r)
				}
			}
			for version, want := range map[string]string{
				"2025-06-18": "which MCP 2025-06-18 (the version this client speaks) does not have",
				"2025-11-25": map[bool]string{false: "which this client did not declare", true: "it did not declare URL elicitation"}[denials],
			} {
				c := &legacyclient.Raw{Token: mintFor(t, gw.iss, "alice"), Protocol: version} // declares form elicitation only
				r := c.Post(t, gw.url(), c.Initialize(t, gw.url()), c.CallBody("alpha__"+mcptest.ToolEcho, "approve me"))
				text := legacyclient.ResultText(r.Msgs)
				if r.Status != http.StatusOK || !strings.Contains(text, want) || version == "2025-06-18" && strings.Contains(text, "declare") {
					t.Errorf("%s: want %q, got %s", version, want, r)
				}
				if got := strings.Contains(r.Body, "io.modelcontextprotocol/authorization"); got != denials {
					t.Errorf("%s: envelope %v, want %v: %s", version, got, denials, r)
				}
			}
			if n := toolCalls(alpha); n != 0 {
				t.Fatalf("the backend got %d calls", n)
			}
		})
	}
}
