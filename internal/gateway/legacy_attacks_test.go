package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// Session and answer attacks on the legacy path, with raw HTTP so each test controls every byte
// (issue 17: a sealed session id bound to the caller; single-use, unforgeable answer ids). A
// session id the gateway cannot open as this caller's live session is 404, and the backend sees
// nothing; an answer id the gateway did not issue, or one already used, is refused and changes
// nothing at the backend.
//
//	go test -race -count=1 -run 'TestLegacySessionAttacks|TestLegacyAnswerAttacks|TestLegacySessionless' ./internal/gateway

// legacyRaw is one caller speaking the legacy transport by hand to one endpoint.
type legacyRaw struct {
	url string
	raw *legacyclient.Raw
}

func (c *legacyRaw) initialize(t *testing.T) string { return c.raw.Initialize(t, c.url) }

func (c *legacyRaw) post(t *testing.T, sid, body string) legacyclient.Response {
	return c.raw.Post(t, c.url, sid, body)
}

func (c *legacyRaw) callEcho(t *testing.T, sid, name, text string) legacyclient.Response {
	return c.raw.CallText(t, c.url, sid, name, text)
}

// sessionGone asserts the 404 of a session that cannot be opened: the status after which a
// 2025-11-25 client must initialize again (never 400 or 401, which make clients retry a dead id
// or start an OAuth flow). checkBody asks for the gateway's body, the id-less JSON-RPC error
// {-32600, "Session not found; re-initialize"}; a direct server words it its own way.
func sessionGone(t *testing.T, what string, r legacyclient.Response, checkBody bool) {
	t.Helper()
	if r.Status != http.StatusNotFound {
		t.Errorf("%s: want 404, got %s", what, r)
		return
	}
	if checkBody && (!strings.Contains(r.Body, "-32600") || !strings.Contains(r.Body, "Session not found")) {
		t.Errorf("%s: want the body {code -32600, Session not found; re-initialize}, got %s", what, r)
	}
}

// legacyAttackTarget is a target with its backend's echo name and a way to make callers.
type legacyAttackTarget struct {
	echo    string
	backend *mcptest.Server
	caller  func(t *testing.T, sub string) *legacyRaw
}

func directAttackTarget(t *testing.T) *legacyAttackTarget {
	t.Helper()
	tg := directLegacyTarget(t)
	return &legacyAttackTarget{echo: tg.tools.Echo, backend: tg.backend,
		caller: func(*testing.T, string) *legacyRaw { return &legacyRaw{url: tg.url, raw: &legacyclient.Raw{}} }}
}

func gatewayAttackTarget(t *testing.T, iss *devissuer.Issuer, mutate func(*Config)) *legacyAttackTarget {
	t.Helper()
	alpha := mcptest.StartServer(t, "alpha")
	gw := legacyGateway(t, iss, mutate, alpha)
	return &legacyAttackTarget{echo: "alpha__echo", backend: alpha,
		caller: func(t *testing.T, sub string) *legacyRaw {
			return &legacyRaw{url: gw.url(), raw: &legacyclient.Raw{Token: mintFor(t, gw.iss, sub)}}
		}}
}

// TestLegacySessionAttacks: a tampered, truncated, expired or foreign session id, or one sealed
// under a key no longer in the ring, is 404 and reaches no backend.
func TestLegacySessionAttacks(t *testing.T) {
	t.Run("direct", func(t *testing.T) {
		// The go-sdk's own sessions: the harness's requests and the 404s it expects.
		tg := directAttackTarget(t)
		alice := tg.caller(t, "alice")
		sid := alice.initialize(t)
		if r := alice.callEcho(t, sid, tg.echo, "control"); legacyclient.ResultText(r.Msgs) != "control" {
			t.Fatalf("control call on a good session: %s", r)
		}
		sessionGone(t, "tampered", alice.callEcho(t, legacyclient.Tamper(sid), tg.echo, "tampered"), false)
		sessionGone(t, "truncated", alice.callEcho(t, sid[:len(sid)/2], tg.echo, "truncated"), false)
	})
	t.Run("gateway", func(t *testing.T) {
		tg := gatewayAttackTarget(t, nil, nil)
		alice, bob := tg.caller(t, "alice"), tg.caller(t, "bob")
		sid := alice.initialize(t)
		if r := alice.callEcho(t, sid, tg.echo, "control"); legacyclient.ResultText(r.Msgs) != "control" {
			t.Fatalf("control call on a good session: %s", r)
		}
		for _, a := range []struct {
			name   string
			caller *legacyRaw
			sid    string
		}{
			{"tampered", alice, legacyclient.Tamper(sid)},
			{"truncated", alice, sid[:len(sid)/2]},
			{"another user's session", bob, sid},
			{"not a session id", alice, "s1.k1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
		} {
			t.Run(a.name, func(t *testing.T) {
				tg.backend.Reset()
				sessionGone(t, a.name, a.caller.callEcho(t, a.sid, tg.echo, a.name), true)
				if n := len(tg.backend.Forwarded()); n != 0 {
					t.Errorf("the backend received %d requests", n)
				}
			})
		}
	})
	t.Run("gateway/expired", func(t *testing.T) {
		const ttl = time.Second
		tg := gatewayAttackTarget(t, nil, func(c *Config) {
			if err := decodeYAML(strings.NewReader("legacy:\n  sessionTTL: 1s\n"), c); err != nil {
				t.Fatalf("legacy.sessionTTL: %v", err)
			}
		})
		alice := tg.caller(t, "alice")
		sid := alice.initialize(t)
		// Expiry has whole-second resolution: wait until the id is past it for certain.
		time.Sleep(ttl + 1500*time.Millisecond)
		tg.backend.Reset()
		sessionGone(t, "expired", alice.callEcho(t, sid, tg.echo, "expired"), true)
		if n := len(tg.backend.Forwarded()); n != 0 {
			t.Errorf("the backend received %d requests", n)
		}
	})
	t.Run("gateway/key removed from the ring", func(t *testing.T) {
		iss := newIssuer(t)
		k2 := KeyConfig{ID: "k2", Secret: Secret{Value: "another-test-only-secret-of-32-bytes-or-more"}}
		before := gatewayAttackTarget(t, iss, nil)
		// The same deployment after a rotation: k2 added first, k1 kept (ids still open) ...
		rotated := gatewayAttackTarget(t, iss, func(c *Config) { c.MRTR.Keys = []KeyConfig{k2, testKeys[0]} })
		// ... and after k1 was removed.
		removed := gatewayAttackTarget(t, iss, func(c *Config) { c.MRTR.Keys = []KeyConfig{k2} })
		sid := before.caller(t, "alice").initialize(t)
		if r := rotated.caller(t, "alice").callEcho(t, sid, rotated.echo, "rotated"); legacyclient.ResultText(r.Msgs) != "rotated" {
			t.Fatalf("a session sealed under k1 with k1 still in the ring: %s", r)
		}
		removed.backend.Reset()
		sessionGone(t, "key removed", removed.caller(t, "alice").callEcho(t, sid, removed.echo, "removed"), true)
		if n := len(removed.backend.Forwarded()); n != 0 {
			t.Errorf("the backend received %d requests", n)
		}
	})
}

// TestLegacyAnswerAttacks: while a confirmation waits for the client's answer, forged answer ids
// and another user's answer are refused and run nothing; the genuine answer runs the call once;
// replaying it is refused and runs nothing more. Against the direct server (whose own
// confirmation has the same shape) the statuses of refused answers are only logged: the go-sdk
// accepts and drops a response it did not ask for; the tool runs must still be exact.
func TestLegacyAnswerAttacks(t *testing.T) {
	for _, target := range legacyTargets() {
		t.Run(target.name, func(t *testing.T) {
			tg := target.start(t)
			gateway := target.name == "gateway"
			alice := &legacyRaw{url: tg.url, raw: &legacyclient.Raw{Token: tg.tokenFor(t, "alice")}}
			bob := &legacyRaw{url: tg.url, raw: &legacyclient.Raw{Token: tg.tokenFor(t, "bob")}}
			sid := alice.initialize(t)
			stream := alice.raw.Open(t, tg.url, sid, alice.raw.CallBody(tg.tools.Confirm, "approved"))
			ask := stream.NextRequest(t, "elicitation/create")
			if !strings.Contains(string(ask.Params), `"approve"`) {
				t.Fatalf("elicitation/create does not ask for approve: %s", ask.Params)
			}
			refused := func(what string, r legacyclient.Response, want int) {
				t.Helper()
				if gateway && r.Status != want {
					t.Errorf("%s: want HTTP %d, got %s", what, want, r)
				}
				if !gateway {
					t.Logf("direct, %s: %s", what, r)
				}
				if n := tg.deploys.Load(); n != 0 {
					t.Errorf("%s: deploy ran %d times", what, n)
				}
			}
			refused("forged answer id", alice.post(t, sid, legacyclient.AnswerBody(legacyclient.ForgeID(ask.ID), true)), http.StatusBadRequest)
			refused("invented answer id", alice.post(t, sid, legacyclient.AnswerBody(json.RawMessage(`"g1.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA"`), true)), http.StatusBadRequest)
			if gateway {
				refused("another user's answer", bob.post(t, sid, legacyclient.AnswerBody(ask.ID, true)), http.StatusNotFound)
			}
			if r := alice.post(t, sid, legacyclient.AnswerBody(ask.ID, true)); r.Status != http.StatusAccepted {
				t.Fatalf("the genuine answer: want 202, got %s", r)
			}
			final := stream.NextResult(t)
			if final.Error != nil || legacyclient.ResultText([]json.RawMessage{mustJSON(t, final)}) != "approved" {
				t.Fatalf("the approved call: result %s error %s", final.Result, final.Error)
			}
			if n := tg.deploys.Load(); n != 1 {
				t.Fatalf("after the genuine answer deploy ran %d times, want 1", n)
			}
			r := alice.post(t, sid, legacyclient.AnswerBody(ask.ID, true))
			if gateway && r.Status != http.StatusBadRequest {
				t.Errorf("replayed answer: want HTTP 400, got %s", r)
			}
			if n := tg.deploys.Load(); n != 1 {
				t.Errorf("after the replayed answer deploy ran %d times, want 1", n)
			}
			// A stream that cannot be resumed statelessly must not invite resumption.
			if gateway && stream.SawEventID() {
				t.Errorf("the gateway's legacy SSE stream carried event ids")
			}
			if !gateway {
				t.Logf("direct: the stream carried event ids: %v", stream.SawEventID())
			}
		})
	}
}

// mustJSON re-encodes a message, for helpers that read raw messages.
func mustJSON(t *testing.T, m legacyclient.Message) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLegacySessionless: a legacy client that never echoes Mcp-Session-Id (some hosts do not)
// but sends the 2025 version header is served all the same (issue 17). The direct reference is
// a go-sdk server in its stateless mode, which serves such requests itself.
func TestLegacySessionless(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) *legacyAttackTarget
	}{
		{"direct", func(t *testing.T) *legacyAttackTarget {
			srv := mcptest.StartServer(t, "alpha")
			return &legacyAttackTarget{echo: mcptest.ToolEcho, backend: srv,
				caller: func(*testing.T, string) *legacyRaw { return &legacyRaw{url: srv.URL(), raw: &legacyclient.Raw{}} }}
		}},
		{"gateway", func(t *testing.T) *legacyAttackTarget { return gatewayAttackTarget(t, nil, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := tc.start(t)
			c := tg.caller(t, "alice")
			req, err := c.raw.Request(t.Context(), c.url, "", c.raw.CallBody(tg.echo, "no session"))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("MCP-Protocol-Version", legacyclient.Version)
			r := legacyclient.Do(t, req)
			if r.Status != http.StatusOK || legacyclient.ResultText(r.Msgs) != "no session" {
				t.Fatalf("a session-less %s tools/call: want 200 with the echo, got %s", legacyclient.Version, r)
			}
		})
	}
}

// TestLegacyNoElicitationCapability: a 2025 client that declared no elicitation calls a tool
// that needs confirmation. The gateway answers with a tool error naming what is missing, and the
// call never reaches the backend. The direct server, asked the same, must not run the tool either.
func TestLegacyNoElicitationCapability(t *testing.T) {
	for _, target := range legacyTargets() {
		t.Run(target.name, func(t *testing.T) {
			tg := target.start(t)
			opts := []mcptest.ClientOption{mcptest.WithProtocolVersion(legacyclient.Version)}
			if tok := tg.tokenFor(t, "alice"); tok != "" {
				opts = append(opts, mcptest.WithBearer(tok))
			}
			cs := mcptest.Connect(t, tg.url, opts...)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tg.tools.Confirm, Arguments: map[string]any{"text": "unasked"}})
			if target.name == "gateway" {
				if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "elicitation") {
					t.Errorf("want a tool error naming elicitation, got %v %+v", err, res)
				}
			} else {
				t.Logf("direct: %v %+v", err, res)
			}
			if n := tg.deploys.Load(); n != 0 {
				t.Errorf("the tool ran %d times for a client that could not be asked", n)
			}
		})
	}
}
