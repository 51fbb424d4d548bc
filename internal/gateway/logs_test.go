package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// Values that must never reach a log line.
const (
	logsArgSecret     = "s3cr3t-arg-VALUE"
	logsBackendSecret = "backend-secret-XYZ"
	logsMRTRSecret    = "mrtr-key-SECRET-0123456789-abcdefghijkl"
)

// startLoggedGateway is startTestGateway with the log kept: JSON at debug level, so every line
// any level could write is searched. stop ends the gateway and waits for serve to return, after
// which every access line has been written.
func startLoggedGateway(t *testing.T, mutate func(*Config), backends ...*mcptest.Server) (gw Listeners, logs *mcptest.LogBuffer, stop func()) {
	t.Helper()
	cfg := testConfig("debug", "json", backends...)
	mutate(cfg)
	cfg.applyDefaults()
	cfg.Server.DrainDelay = 0
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	logs = &mcptest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan Listeners, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, func(string) string { return "" }, io.Discard, logs, started) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case gw = <-started:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return gw, logs, stop
}

// startLogsGateway fronts alpha, which the gateway reaches with a static secret header, with
// authentication, an MRTR key and this policy:
//
//	echo-confirm: echo      needs tools:use, and the user's confirmation
//	admin:        whoami    needs tools:admin (step-up for tools:use callers)
//	rest:         add, fail, ask_name need tools:use
//	(slow has no rule: hidden)
func startLogsGateway(t *testing.T, iss *devissuer.Issuer, alpha *mcptest.Server) (Listeners, *mcptest.LogBuffer, func()) {
	t.Helper()
	return startLoggedGateway(t, func(c *Config) {
		c.Server.PublicURL = testResource
		c.MRTR.Keys = []KeyConfig{{ID: "k1", Secret: Secret{Value: logsMRTRSecret}}}
		c.Upstreams[0].Headers = map[string]Secret{"X-Api-Key": {Value: logsBackendSecret}}
		c.Auth.Issuers = []authz.IssuerConfig{{Issuer: iss.URL()}}
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "echo-confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			{ID: "admin", Upstream: "alpha", Tools: []string{"whoami"}, AllScopes: []string{"tools:admin"}},
			{ID: "rest", Upstream: "alpha", Tools: []string{"add", "fail", "ask_name"}, AnyScope: []string{"tools:use"}},
		}
	}, alpha)
}

// TestLogsKeepSecretsOut runs representative traffic (lists, a confirmed call, a backend MRTR
// round trip, a backend error, a step-up denial, a hidden tool, a tampered requestState, bad
// tokens) through the real gateway and searches every captured log line, and then a scrape of
// /metrics, for tokens, token parts, configured secrets and argument values. It also checks what an operator needs: the
// access line's fields and the decision line of a denied call.
func TestLogsKeepSecretsOut(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw, logs, stop := startLogsGateway(t, iss, alpha)
	alice := mintFor(t, iss, "alice")
	bad := badTokens(t, iss)
	secrets := []string{logsArgSecret, logsBackendSecret, logsMRTRSecret}
	for _, tok := range append([]string{alice}, bad...) {
		secrets = append(secrets, tok)
		secrets = append(secrets, strings.Split(tok, ".")...)
	}

	logsTraffic(t, gw, alice, bad)
	// SECURITY.md: secrets are never put in metrics either; the scrape after the same traffic.
	scrape := get(t, "http://"+gw.Admin+"/metrics")
	for _, s := range secrets {
		if len(s) >= 8 && strings.Contains(scrape, s) {
			t.Errorf("the metrics contain a secret %q…", s[:8])
		}
	}
	stop()

	lines := logLines(t, logs.String())
	if len(lines) < 10 {
		t.Fatalf("captured only %d log lines; is the log reaching the test?", len(lines))
	}
	for i, raw := range strings.Split(logs.String(), "\n") {
		for _, s := range secrets {
			if len(s) >= 8 && strings.Contains(raw, s) {
				t.Errorf("log line %d contains a secret %q…: %s", i, s[:8], raw)
			}
		}
	}
	checkAccessLine(t, lines)
	checkDeniedDecision(t, lines)
}

// badTokens are credentials the gateway must refuse: a tampered signature, a tampered payload
// and a key the issuer never published.
func badTokens(t *testing.T, iss *devissuer.Issuer) []string {
	t.Helper()
	good := mintFor(t, iss, "mallory")
	payload, err := devissuer.TamperPayload(good, devissuer.Claims{"scope": "tools:admin"})
	if err != nil {
		t.Fatal(err)
	}
	// Issued before the gateway fetched the key set, so that set refuses it (401, not retry).
	unknown, err := iss.MintUnknownKey(devissuer.Claims{"sub": "mallory", "scope": "tools:use", "iat": time.Now().Add(-time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	return []string{devissuer.TamperSignature(good), payload, unknown}
}

func logsTraffic(t *testing.T, gw Listeners, alice string, bad []string) {
	t.Helper()
	ctx := context.Background()
	url := "http://" + gw.MCP + "/mcp"
	confirm := mcptest.Connect(t, url, mcptest.WithBearer(alice), mcptest.WithElicitation(mcptest.Accept(map[string]any{"approve": true})))
	toolNames(t, confirm)
	res, err := confirm.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": logsArgSecret}})
	if err != nil || mcptest.ResultText(res) != logsArgSecret {
		t.Fatalf("confirmed echo: %v %+v", err, res)
	}
	if res, err = confirm.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__fail"}); err != nil || !res.IsError {
		t.Fatalf("fail tool: %v %+v", err, res)
	}
	named := mcptest.Connect(t, url, mcptest.WithBearer(alice), mcptest.WithElicitation(mcptest.Accept(map[string]any{"name": logsArgSecret})))
	if res, err = named.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__ask_name"}); err != nil || !strings.Contains(mcptest.ResultText(res), logsArgSecret) {
		t.Fatalf("backend round trip: %v %+v", err, res)
	}
	args := `{"text":"` + logsArgSecret + `"}`
	if status, _ := rawCall(t, gw, alice, "alpha__whoami", args, ""); status != 403 {
		t.Errorf("step-up call: status %d, want 403", status)
	}
	if _, r := rawCall(t, gw, alice, "alpha__slow", args, ""); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("hidden tool: %+v, want -32602", r)
	}
	_, r := rawCall(t, gw, alice, "alpha__echo", args, "")
	if r.Result.RequestState == "" {
		t.Fatalf("no confirmation asked: %+v", r)
	}
	if status, _ := rawCall(t, gw, alice, "alpha__echo", args, approve(r.Result.RequestState+"x")); status != 400 {
		t.Errorf("tampered requestState: status %d, want 400", status)
	}
	for _, tok := range bad {
		if status, _ := rawCall(t, gw, tok, "alpha__add", `{"a":1,"b":2}`, ""); status != 401 {
			t.Errorf("bad token: status %d, want 401", status)
		}
	}
}

type logLine map[string]any

func logLines(t *testing.T, out string) []logLine {
	t.Helper()
	var lines []logLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return lines
}

func (l logLine) str(k string) string {
	s, _ := l[k].(string)
	return s
}

// checkAccessLine: the confirmed call's access line names the request, the caller, the tool
// and the backend, and the result.
func checkAccessLine(t *testing.T, lines []logLine) {
	t.Helper()
	for _, l := range lines {
		if l.str("msg") != "request" || l.str("method") != "tools/call" || l.str("name") != "alpha__echo" || l["status"] != float64(200) {
			continue
		}
		for _, k := range []string{"request_id", "method", "name", "upstream", "subject", "status", "outcome", "duration"} {
			if _, ok := l[k]; !ok {
				t.Errorf("access line lacks %q: %v", k, l)
			}
		}
		if l.str("upstream") != "alpha" || !strings.HasSuffix(l.str("subject"), "#alice") || l.str("request_id") == "" || l.str("outcome") == "" {
			t.Errorf("access line values: %v", l)
		}
		return
	}
	t.Errorf("no access line for the confirmed alpha__echo call")
}

// checkDeniedDecision: an operator can tell from the log who was denied what, and why.
func checkDeniedDecision(t *testing.T, lines []logLine) {
	t.Helper()
	for _, l := range lines {
		if l.str("msg") == "authz decision" && l.str("name") == "whoami" && l.str("subject") == "alice" {
			if l.str("effect") == "allow" || l.str("reason") == "" || l.str("rule") != "admin" {
				t.Errorf("decision line for the denied call: %v", l)
			}
			// The README: the decision line joins its access line on request_id.
			for _, a := range lines {
				if a.str("msg") == "request" && a.str("request_id") != "" && a.str("request_id") == l.str("request_id") {
					if a.str("name") != "alpha__whoami" || a["status"] != float64(403) {
						t.Errorf("the decision line's request_id names another request: %v", a)
					}
					return
				}
			}
			t.Errorf("no access line carries the decision line's request_id: %v", l)
			return
		}
	}
	t.Errorf("no decision line for alice's denied whoami call")
}

// TestTracePropagation: the caller's trace context reaches the backend both as the Traceparent
// header and in _meta.traceparent (SEP-414), whichever of the two the caller used.
func TestTracePropagation(t *testing.T) {
	const (
		tpHeader = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		tpMeta   = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	)
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, nil, alpha)
	tests := []struct {
		name, header, meta, want string
	}{
		{"header only", tpHeader, "", tpHeader},
		{"_meta only", "", tpMeta, tpMeta},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alpha.Reset()
			h := modernHeaders("tools/call", "alpha__echo")
			if tt.header != "" {
				h.Set("Traceparent", tt.header)
			}
			meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
			if tt.meta != "" {
				meta += `,"traceparent":"` + tt.meta + `"`
			}
			status, _, body := post(t, "http://"+gw.MCP+"/mcp", h,
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{`+meta+`},"name":"alpha__echo","arguments":{"text":"t"}}}`)
			if status != 200 {
				t.Fatalf("call: %d %s", status, body)
			}
			// The gateway also polls backends in the background; look at the call only.
			reqs := alpha.RequestsOf("tools/call")
			if len(reqs) != 1 {
				t.Fatalf("backend received %d tools/call requests", len(reqs))
			}
			if got := reqs[0].Header.Get("Traceparent"); got != tt.want {
				t.Errorf("backend Traceparent header = %q, want %q", got, tt.want)
			}
			var sent struct {
				Params struct {
					Meta map[string]any `json:"_meta"`
				} `json:"params"`
			}
			if err := json.Unmarshal(reqs[0].Body, &sent); err != nil {
				t.Fatal(err)
			}
			if got := sent.Params.Meta["traceparent"]; got != tt.want {
				t.Errorf("backend _meta.traceparent = %v, want %q", got, tt.want)
			}
		})
	}
}
