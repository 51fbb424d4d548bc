package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

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
			c.Legacy.Enabled = true
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
