package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/devissuer"
	"github.com/mcp-gateway/gateway/internal/mcptest"
)

// Session and answer attacks on the legacy path, with raw HTTP so each test controls every byte
// (issue 17: a sealed session id bound to the caller; single-use, unforgeable answer ids). A
// session id the gateway cannot open as this caller's live session is 404, and the backend sees
// nothing; an answer id the gateway did not issue, or one already used, is refused and changes
// nothing at the backend.
//
//	go test -race -count=1 -run 'TestLegacySessionAttacks|TestLegacyAnswerAttacks' ./cmd/gateway

// legacyVersion is the version the raw legacy requests negotiate.
const legacyVersion = "2025-11-25"

// legacyRawTimeout bounds one raw request, or the wait for one message of a stream.
const legacyRawTimeout = 15 * time.Second

// legacyRaw speaks the 2025-11-25 Streamable HTTP transport by hand for one caller.
type legacyRaw struct {
	url   string
	token string
	ids   atomic.Int64
}

// rawResponse is one HTTP response: status, headers, the whole body and, for JSON or SSE, the
// JSON-RPC messages it carried.
type rawResponse struct {
	Status int
	Header http.Header
	Body   string
	Msgs   []json.RawMessage
}

func (r rawResponse) String() string {
	return fmt.Sprintf("HTTP %d %s", r.Status, strings.TrimSpace(r.Body))
}

// newRequest builds a legacy POST: no MCP-Protocol-Version on initialize (no client sends one),
// the negotiated version and the session id afterwards.
func (c *legacyRaw) newRequest(ctx context.Context, sid, body string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", legacyVersion)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req, nil
}

// post sends body and reads the whole response.
func (c *legacyRaw) post(t *testing.T, sid, body string) rawResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), legacyRawTimeout)
	defer cancel()
	req, err := c.newRequest(ctx, sid, body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := rawResponse{Status: res.StatusCode, Header: res.Header, Body: string(b)}
	switch ct := res.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "text/event-stream"):
		r.Msgs = sseMessages(b)
	case strings.HasPrefix(ct, "application/json") && json.Valid(b):
		r.Msgs = []json.RawMessage{b}
	}
	return r
}

// sseMessages returns the data of each event of a complete SSE body.
func sseMessages(b []byte) []json.RawMessage {
	var out []json.RawMessage
	var data []byte
	for _, line := range bytes.Split(append(b, '\n'), []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimSpace(d)...)
			continue
		}
		if len(line) == 0 && len(data) > 0 {
			out = append(out, json.RawMessage(data))
			data = nil
		}
	}
	return out
}

// initialize runs the handshake (initialize, then notifications/initialized) and returns the
// session id the server minted.
func (c *legacyRaw) initialize(t *testing.T) string {
	t.Helper()
	r := c.post(t, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+legacyVersion+
		`","capabilities":{"elicitation":{}},"clientInfo":{"name":"legacy-attacks","version":"1.0.0"}}}`)
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" || len(r.Msgs) == 0 || !strings.Contains(string(r.Msgs[len(r.Msgs)-1]), `"protocolVersion":"`+legacyVersion+`"`) {
		t.Fatalf("initialize: want 200 with Mcp-Session-Id and %s, got %s (session id present: %v)", legacyVersion, r, sid != "")
	}
	if n := c.post(t, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); n.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: want 202, got %s", n)
	}
	return sid
}

// callEcho sends tools/call for the echo tool named name on the session.
func (c *legacyRaw) callEcho(t *testing.T, sid, name, text string) rawResponse {
	t.Helper()
	return c.post(t, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"text":%q}}}`,
		c.ids.Add(1), name, text))
}

// resultText is the text of the tools/call result among msgs, "" when there is none.
func resultText(msgs []json.RawMessage) string {
	for _, m := range msgs {
		var msg struct {
			Result *struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal(m, &msg) == nil && msg.Result != nil {
			var b strings.Builder
			for _, c := range msg.Result.Content {
				b.WriteString(c.Text)
			}
			return b.String()
		}
	}
	return ""
}

// tamper changes one character near the end of id, inside whatever a server seals or looks up.
func tamper(id string) string {
	b := []byte(id)
	i := len(b) - 5
	if i < 0 {
		i = 0
	}
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// sessionGone asserts the 404 of a session that cannot be opened: the status after which a
// 2025-11-25 client must initialize again (never 400 or 401, which make clients retry a dead id
// or start an OAuth flow). checkBody asks for the gateway's body, the id-less JSON-RPC error
// {-32600, "Session not found; re-initialize"}; a direct server words it its own way.
func sessionGone(t *testing.T, what string, r rawResponse, checkBody bool) {
	t.Helper()
	if r.Status != http.StatusNotFound {
		t.Errorf("%s: want 404, got %s", what, r)
		return
	}
	if checkBody && (!strings.Contains(r.Body, "-32600") || !strings.Contains(r.Body, "Session not found")) {
		t.Errorf("%s: want the body {code -32600, Session not found; re-initialize}, got %s", what, r)
	}
}

// legacyAttackTarget is a target with its backend's echo name and a way to mint callers.
type legacyAttackTarget struct {
	url     string
	echo    string
	backend *mcptest.Server
	caller  func(t *testing.T, sub string) *legacyRaw
	gateway bool
}

func directAttackTarget(t *testing.T) *legacyAttackTarget {
	t.Helper()
	tg := directLegacyTarget(t)
	return &legacyAttackTarget{url: tg.url, echo: tg.tools.Echo, backend: tg.backend,
		caller: func(*testing.T, string) *legacyRaw { return &legacyRaw{url: tg.url} }}
}

func gatewayAttackTarget(t *testing.T, iss *devissuer.Issuer, mutate func(*Config)) *legacyAttackTarget {
	t.Helper()
	alpha := mcptest.StartServer(t, "alpha")
	gw := legacyGateway(t, iss, mutate, alpha)
	return &legacyAttackTarget{url: gw.url(), echo: "alpha__echo", backend: alpha, gateway: true,
		caller: func(t *testing.T, sub string) *legacyRaw {
			return &legacyRaw{url: gw.url(), token: mintFor(t, gw.iss, sub)}
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
		if r := alice.callEcho(t, sid, tg.echo, "control"); resultText(r.Msgs) != "control" {
			t.Fatalf("control call on a good session: %s", r)
		}
		sessionGone(t, "tampered", alice.callEcho(t, tamper(sid), tg.echo, "tampered"), false)
		sessionGone(t, "truncated", alice.callEcho(t, sid[:len(sid)/2], tg.echo, "truncated"), false)
	})
	t.Run("gateway", func(t *testing.T) {
		tg := gatewayAttackTarget(t, nil, nil)
		alice, bob := tg.caller(t, "alice"), tg.caller(t, "bob")
		sid := alice.initialize(t)
		if r := alice.callEcho(t, sid, tg.echo, "control"); resultText(r.Msgs) != "control" {
			t.Fatalf("control call on a good session: %s", r)
		}
		for _, a := range []struct {
			name   string
			caller *legacyRaw
			sid    string
		}{
			{"tampered", alice, tamper(sid)},
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
		if r := rotated.caller(t, "alice").callEcho(t, sid, rotated.echo, "rotated"); resultText(r.Msgs) != "rotated" {
			t.Fatalf("a session sealed under k1 with k1 still in the ring: %s", r)
		}
		removed.backend.Reset()
		sessionGone(t, "key removed", removed.caller(t, "alice").callEcho(t, sid, removed.echo, "removed"), true)
		if n := len(removed.backend.Forwarded()); n != 0 {
			t.Errorf("the backend received %d requests", n)
		}
	})
}

// legacyStream is a POST whose response is read as it arrives, message by message.
type legacyStream struct {
	res  *http.Response
	msgs chan json.RawMessage
	done chan struct{}
}

// open sends body and starts reading the response's messages.
func (c *legacyRaw) open(t *testing.T, sid, body string) *legacyStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 4*legacyRawTimeout)
	req, err := c.newRequest(ctx, sid, body)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &legacyStream{res: res, msgs: make(chan json.RawMessage, 16), done: make(chan struct{})}
	go s.read()
	t.Cleanup(func() {
		cancel()
		res.Body.Close()
		<-s.done
	})
	return s
}

func (s *legacyStream) read() {
	defer close(s.done)
	defer close(s.msgs)
	if !strings.HasPrefix(s.res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(s.res.Body)
		if json.Valid(b) {
			s.msgs <- b
		}
		return
	}
	sc := bufio.NewScanner(s.res.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	var data []byte
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimSpace(d)...)
			continue
		}
		if line == "" && len(data) > 0 {
			s.msgs <- json.RawMessage(data)
			data = nil
		}
	}
}

// next returns the next message, failing the test when the stream ends or stalls first.
func (s *legacyStream) next(t *testing.T, what string) json.RawMessage {
	t.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			t.Fatalf("%s: the stream ended (HTTP %d)", what, s.res.StatusCode)
		}
		return m
	case <-time.After(legacyRawTimeout):
		t.Fatalf("%s: nothing on the stream within %v", what, legacyRawTimeout)
	}
	return nil
}

// rpcMessage is the part of a JSON-RPC message the answer tests read.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// forgeID returns an id of the same kind as id that its issuer never issued.
func forgeID(id json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(id, &s) == nil {
		b, _ := json.Marshal(tamper(s))
		return b
	}
	return json.RawMessage(`987654321`)
}

// answerBody is the client's JSON-RPC response to a server request with id.
func answerBody(id json.RawMessage, approve bool) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"approve":%t}}}`, id, approve)
}

// TestLegacyAnswerAttacks: while a confirmation waits for the client's answer, forged answer ids
// and another user's answer are refused and run nothing; the genuine answer runs the call once;
// replaying it is refused and runs nothing more.
func TestLegacyAnswerAttacks(t *testing.T) {
	for _, target := range legacyTargets() {
		t.Run(target.name, func(t *testing.T) {
			tg := target.start(t)
			gateway := target.name == "gateway"
			alice := &legacyRaw{url: tg.url, token: tg.tokenFor(t, "alice")}
			bob := &legacyRaw{url: tg.url, token: tg.tokenFor(t, "bob")}
			sid := alice.initialize(t)
			stream := alice.open(t, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{"text":"approved"}}}`, tg.tools.Confirm))
			var ask rpcMessage
			for ask.Method != "elicitation/create" {
				if err := json.Unmarshal(stream.next(t, "waiting for elicitation/create"), &ask); err != nil {
					t.Fatal(err)
				}
				if ask.Result != nil || ask.Error != nil {
					t.Fatalf("the call ended before asking: result %s error %s", ask.Result, ask.Error)
				}
			}
			if !strings.Contains(string(ask.Params), `"approve"`) {
				t.Fatalf("elicitation/create does not ask for approve: %s", ask.Params)
			}
			refused := func(what string, r rawResponse, want int) {
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
			refused("forged answer id", alice.post(t, sid, answerBody(forgeID(ask.ID), true)), http.StatusBadRequest)
			refused("invented answer id", alice.post(t, sid, answerBody(json.RawMessage(`"g1.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA"`), true)), http.StatusBadRequest)
			if gateway {
				refused("another user's answer", bob.post(t, sid, answerBody(ask.ID, true)), http.StatusNotFound)
			}
			if r := alice.post(t, sid, answerBody(ask.ID, true)); r.Status != http.StatusAccepted {
				t.Fatalf("the genuine answer: want 202, got %s", r)
			}
			var final rpcMessage
			for final.Result == nil && final.Error == nil {
				if err := json.Unmarshal(stream.next(t, "waiting for the result"), &final); err != nil {
					t.Fatal(err)
				}
			}
			if got := resultText([]json.RawMessage{final.Result}); final.Error != nil || !strings.Contains(string(final.Result), `"approved"`) {
				t.Fatalf("the approved call: result %s (text %q) error %s", final.Result, got, final.Error)
			}
			if n := tg.deploys.Load(); n != 1 {
				t.Fatalf("after the genuine answer deploy ran %d times, want 1", n)
			}
			r := alice.post(t, sid, answerBody(ask.ID, true))
			if gateway && r.Status != http.StatusBadRequest {
				t.Errorf("replayed answer: want HTTP 400, got %s", r)
			}
			if n := tg.deploys.Load(); n != 1 {
				t.Errorf("after the replayed answer deploy ran %d times, want 1", n)
			}
		})
	}
}

// TestLegacySessionless: a legacy client that never echoes Mcp-Session-Id (some hosts do not)
// but sends the 2025 version header is served all the same (issue 17). The direct
// reference is a go-sdk server in its stateless mode, which serves such requests itself.
func TestLegacySessionless(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) *legacyAttackTarget
	}{
		{"direct", func(t *testing.T) *legacyAttackTarget {
			srv := mcptest.StartServer(t, "alpha")
			return &legacyAttackTarget{url: srv.URL(), echo: mcptest.ToolEcho, backend: srv,
				caller: func(*testing.T, string) *legacyRaw { return &legacyRaw{url: srv.URL()} }}
		}},
		{"gateway", func(t *testing.T) *legacyAttackTarget { return gatewayAttackTarget(t, nil, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := tc.start(t)
			c := tg.caller(t, "alice")
			ctx, cancel := context.WithTimeout(t.Context(), legacyRawTimeout)
			defer cancel()
			req, err := c.newRequest(ctx, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tg.echo+`","arguments":{"text":"no session"}}}`)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("MCP-Protocol-Version", legacyVersion)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			msgs := sseMessages(b)
			if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
				msgs = []json.RawMessage{b}
			}
			if res.StatusCode != http.StatusOK || resultText(msgs) != "no session" {
				t.Fatalf("a session-less 2025-11-25 tools/call: want 200 with the echo, got HTTP %d %s", res.StatusCode, b)
			}
		})
	}
}
