package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// replicaPair is two replicas of one gateway (the same keys, policy and Redis) with their logs.
type replicaPair struct {
	site       denialSite
	a, b       string // the replicas' MCP endpoints
	logA, logB *mcptest.LogBuffer
}

func startReplicaPair(t *testing.T, drafts []string) replicaPair {
	t.Helper()
	rs := testredis.Start(t)
	p := replicaPair{site: denialSite{iss: newIssuer(t), alpha: mcptest.StartServer(t, "alpha")},
		logA: &mcptest.LogBuffer{}, logB: &mcptest.LogBuffer{}}
	start := func(logs *mcptest.LogBuffer) string {
		gw := startTestGatewayTo(t, logs, func(c *Config) {
			trustIssuers(c, p.site.iss)
			c.Log = LogConfig{Level: "info", Format: "json"}
			c.MRTR.Keys = testKeys
			c.Redis.URL = rs.URL()
			c.Auth.Policy.Rules = denialRules
			c.Approval.ClientID = "gateway-approval"
			c.Server.DraftErrors = drafts
		}, p.site.alpha)
		return "http://" + gw.MCP + "/mcp"
	}
	p.a, p.b = start(p.logA), start(p.logB)
	return p
}

// TestAuthorizationContextAcrossReplicas: a denial's authorizationContextId minted by one replica,
// echoed on the retry to another, ties the retry to the denial in that replica's log when it is the
// gateway's own, for this caller and this call; a forged one, another caller's, or one for other
// arguments is logged as unverified and never as given. Whatever it holds, the retry is answered as
// any other (the handle decides nothing): the call still waiting for the page is asked again, from
// the state both replicas share in Redis.
func TestAuthorizationContextAcrossReplicas(t *testing.T) {
	p := startReplicaPair(t, []string{mcphttp.DraftDenials})
	tok := p.site.token(t, "echoer", "tools:use")
	ask := modernCall(t, p.a, tok, capsURL, "alpha__echo", `{"text":"x"}`, "")
	ctx := handleOf(t, ask)
	// The denial's own line names the handle, the caller, the tool and the remediation, and no
	// argument.
	if l := firstLog(t, p.logA, 0, "authorization denial"); l["authz_ctx"] != ctx || l.str("subject") == "" ||
		l["name"] != "alpha__echo" || l["upstream"] != "alpha" || l["remediation"] != "available" || l["text"] != nil {
		t.Errorf("denial log line %v", l)
	}
	quoted, _ := json.Marshal(ctx)
	forged, _ := json.Marshal(legacyclient.Tamper(ctx))
	for _, c := range []struct {
		name, tok, args, handle string
		verified                bool
	}{
		{"the caller's retry", tok, `{"text":"x"}`, string(quoted), true},
		{"a forged handle", tok, `{"text":"x"}`, string(forged), false},
		{"not a string", tok, `{"text":"x"}`, `{"a":1}`, false},
		{"another caller", p.site.token(t, "other", "tools:use"), `{"text":"x"}`, string(quoted), false},
		{"other arguments", tok, `{"text":"y"}`, string(quoted), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(p.logB.String())
			caps := capsURL + `,"io.modelcontextprotocol/authorization-context-id":` + c.handle
			w := modernCall(t, p.b, c.tok, caps, "alpha__echo", c.args, decided("accept", stateOf(t, ask)))
			line := firstLog(t, p.logB, before, "authorization context echoed")
			if line["verified"] != c.verified || (line["authz_ctx"] == ctx) != c.verified {
				t.Errorf("log %v, want verified %v", line, c.verified)
			}
			if strings.Contains(p.logB.String()[before:], legacyclient.Tamper(ctx)) {
				t.Error("the forged handle was logged")
			}
			// Answered as without the handle: the same call undecided is asked again; another
			// caller's or other arguments' retry is a bad requestState.
			if c.tok == tok && c.args == `{"text":"x"}` {
				if !strings.Contains(w.Msg, `"resultType":"input_required"`) || handleOf(t, w) == "" {
					t.Errorf("retry: %d %s", w.Status, w.Msg)
				}
			} else if !strings.Contains(w.Msg, `"code":-32602`) {
				t.Errorf("retry: %d %s", w.Status, w.Msg)
			}
		})
	}
	// A 2025-11-25 client's denial on one replica, echoed to the other, reaches the same log.
	c, sid := p.site.legacySession(t, p.a, "l-echo", "tools:use", capsForm)
	handle, _ := json.Marshal(handleOf(t, legacyCall(t, c, p.a, sid, "alpha__echo", `{"text":"x"}`)))
	cb, sidB := p.site.legacySession(t, p.b, "l-echo", "tools:use", capsForm)
	before := len(p.logB.String())
	cb.Post(t, p.b, sidB, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"x"},`+
		`"_meta":{"io.modelcontextprotocol/authorization-context-id":`+string(handle)+`}}}`)
	if line := firstLog(t, p.logB, before, "authorization context echoed"); line["verified"] != true {
		t.Errorf("legacy echo: %v", line)
	}

	// What the backend is sent of an echo: a 2026-07-28 request's _meta as the client wrote it,
	// a pre-2026 request's without the client's io.modelcontextprotocol/* keys.
	const echoKey = `"io.modelcontextprotocol/authorization-context-id":"authzctx_1"`
	p.site.alpha.Reset()
	modernCall(t, p.b, tok, capsURL+","+echoKey, "alpha__slow", `{"ms":0}`, "")
	cb.Post(t, p.b, sidB, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"alpha__slow","arguments":{"ms":1},"_meta":{`+echoKey+`}}}`)
	calls := p.site.alpha.RequestsOf("tools/call")
	if len(calls) != 2 || !strings.Contains(string(calls[0].Body), echoKey) || strings.Contains(string(calls[1].Body), "authorization-context-id") {
		t.Errorf("alpha received %d calls: %v", len(calls), calls)
	}
}

// TestRateLimitedAcrossReplicas: a caller that spent a tool's limit on one replica is refused on
// the other with SEP-3304's error, whose retryAfterMs is what is left of the window kept in Redis
// and agrees with Retry-After; with the draft off it is the gateway's -32012 with the same 429.
func TestRateLimitedAcrossReplicas(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("draft ", on), func(t *testing.T) {
			var drafts []string
			if on {
				drafts = []string{mcphttp.DraftRateLimited}
			}
			p := startReplicaPair(t, drafts)
			tok := p.site.token(t, "hourly", "tools:use")
			if w := modernCall(t, p.a, tok, capsURL, "alpha__progress", `{"steps":0}`, ""); w.Status != http.StatusOK {
				t.Fatalf("first call: %d %s", w.Status, w.Msg)
			}
			w := modernCall(t, p.b, tok, capsURL, "alpha__progress", `{"steps":0}`, "")
			var a answer
			if err := json.Unmarshal([]byte(w.Msg), &a); err != nil || a.Error == nil || w.Status != http.StatusTooManyRequests {
				t.Fatalf("second call on the other replica: %d %s", w.Status, w.Msg)
			}
			if !on {
				if a.Error.Code != -32012 || a.Error.Data != nil {
					t.Errorf("draft off: %s", w.Msg)
				}
				return
			}
			if a.Error.Code != -32023 || a.Error.Data == nil || a.Error.Data.RetryAfterMs == nil {
				t.Fatalf("draft on: %s", w.Msg)
			}
			ms := *a.Error.Data.RetryAfterMs
			// One token an hour: the next is most of an hour away.
			if ms < 3_000_000 || ms > 3_600_000 {
				t.Errorf("retryAfterMs %d, want most of an hour", ms)
			}
			if got, want := w.Header.Get("Retry-After"), fmt.Sprint((ms+999)/1000); got != want {
				t.Errorf("Retry-After %q, want %s", got, want)
			}
		})
	}
}

// handleOf is the authorizationContextId of an answer's envelope.
func handleOf(t *testing.T, w wire) string {
	t.Helper()
	var a answer
	if err := json.Unmarshal([]byte(w.Msg), &a); err != nil {
		t.Fatalf("%v: %s", err, w.Msg)
	}
	env := envelopeOf(t, a)
	if env == nil || env.AuthorizationContextID == "" {
		t.Fatalf("no authorizationContextId: %d %s", w.Status, w.Msg)
	}
	return env.AuthorizationContextID
}

// firstLog waits for, and returns, the first line of the JSON log (from offset from on) whose
// msg is msg: the gateway writes its log lines asynchronously.
func firstLog(t *testing.T, logs *mcptest.LogBuffer, from int, msg string) logLine {
	t.Helper()
	var found logLine
	mcptest.WaitFor(t, "the log line "+msg, func() bool {
		for _, l := range logLines(t, logs.String()[from:]) {
			if l.str("msg") == msg {
				found = l
				return true
			}
		}
		return false
	})
	return found
}

// TestDraftErrorsWithSDKClients: the Go SDK's clients, at 2026-07-28 and at 2025-11-25, meet the
// drafts' shapes: a confirmation the client cannot give is a failed tool call whose _meta carries
// the envelope ("undisclosed"); a caller over a tool's limit gets 429, which the SDK (v1.8.0)
// reports as the transport's "Too Many Requests" without reading the body, and the body it was
// sent is -32023 with retryAfterMs (what an SDK reading the body, or a proxy, acts on).
func TestDraftErrorsWithSDKClients(t *testing.T) {
	p := startReplicaPair(t, []string{mcphttp.DraftDenials, mcphttp.DraftRateLimited})
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			rec := &limitedRecorder{base: &http.Transport{}}
			t.Cleanup(rec.base.CloseIdleConnections)
			opts := []mcptest.ClientOption{mcptest.WithBearer(p.site.token(t, "sdk-"+version, "tools:use")),
				mcptest.WithCapabilities(&mcp.ClientCapabilities{}), mcptest.WithRoundTripper(rec)}
			if version != "2026-07-28" {
				opts = append(opts, mcptest.WithProtocolVersion(version))
			}
			cs := mcptest.Connect(t, p.a, opts...)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 2}})
			if err != nil || !res.IsError {
				t.Fatalf("confirmation without elicitation: %v %+v", err, res)
			}
			env, _ := res.Meta["io.modelcontextprotocol/authorization"].(map[string]any)
			if env["remediation"] != "undisclosed" || env["reason"] != "insufficient_authorization" || env["authorizationContextId"] == "" {
				t.Errorf("envelope %v", res.Meta)
			}
			call := &mcp.CallToolParams{Name: "alpha__progress", Arguments: map[string]any{"steps": 0}}
			if _, err := cs.CallTool(t.Context(), call); err != nil {
				t.Fatalf("first call: %v", err)
			}
			if _, err = cs.CallTool(t.Context(), call); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
				t.Errorf("over the limit: %v", err)
			}
			var m answer
			if body := rec.last(); json.Unmarshal(body, &m) != nil || m.Error == nil || m.Error.Code != -32023 ||
				m.Error.Data == nil || m.Error.Data.RetryAfterMs == nil {
				t.Errorf("the 429's body: %s", body)
			}
		})
	}
}

// limitedRecorder keeps the body of the last 429 its client received.
type limitedRecorder struct {
	base *http.Transport
	mu   sync.Mutex
	body []byte
}

func (r *limitedRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.base.RoundTrip(req)
	if err != nil || res.StatusCode != http.StatusTooManyRequests {
		return res, err
	}
	b, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(b))
	r.mu.Lock()
	r.body = b
	r.mu.Unlock()
	return res, err
}

func (r *limitedRecorder) last() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.body
}

// TestLegacyClientsWithDraftErrors: the TypeScript SDK v1 client passes every step of the
// legacy scenario through a gateway with both draft shapes on, as it does with them off
// (TestLegacyClients): a declined confirmation, now a failed tool call carrying the envelope,
// is still read as the failed call it is.
func TestLegacyClientsWithDraftErrors(t *testing.T) {
	t.Parallel()
	deploys := &atomic.Int64{}
	alpha := mcptest.StartServer(t, "alpha", legacyclient.DeployTool(deploys), legacyclient.AskRoundsTool())
	gw := legacyGateway(t, nil, func(c *Config) {
		c.Server.DraftErrors = []string{mcphttp.DraftDenials, mcphttp.DraftRateLimited}
	}, alpha)
	sc := legacyclient.Scenario{URL: gw.url(), Token: mintFor(t, gw.iss, "alice"), Prompt: "alpha__" + mcptest.PromptGreet,
		Tools: legacyclient.Tools{Echo: "alpha__echo", Progress: "alpha__progress", Ask: "alpha__ask_name",
			Confirm: "alpha__" + legacyclient.ToolDeploy, Rounds: "alpha__" + legacyclient.ToolAskRounds}}
	steps := legacyclient.RunTS(t, sc)
	legacyclient.Check(t, sc, steps, legacyclient.Expect{Version: legacyclient.TSProtocol, Deploys: deploys, RoundsConfirmed: true})
}
