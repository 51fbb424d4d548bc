//lint:file-ignore SA1019 pre-2026 clients and backends still use logging, sampling and roots, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package pre2026

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestSessionStateBoundedPerCaller: however many sessions a caller opens, the gateway keeps the
// state of its maxStateSessions most recently changed ones, in one record of at most
// maxStateBytes; a change too large for the record even alone is refused; another caller's
// state is untouched.
func TestSessionStateBoundedPerCaller(t *testing.T) {
	clock := mcptest.NewClock(time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC))
	kv, err := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	st, err := newSessionState(kv, testKeyRing(t), nil, slog.New(slog.DiscardHandler), clock.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	session := func(n int) *legacysession.Session {
		s := &legacysession.Session{Version: "2025-11-25", Expires: clock.Now().Add(time.Hour)}
		s.Nonce[0], s.Nonce[1] = byte(n), byte(n>>8)
		return s
	}
	const alice, bob = "https://idp#alice", "https://idp#bob"
	if err := st.setLevel(ctx, session(1000), bob, "debug"); err != nil {
		t.Fatal(err)
	}
	for n := range 3 * maxStateSessions {
		if err := st.setLevel(ctx, session(n), alice, "info"); err != nil {
			t.Fatalf("session %d: %v", n, err)
		}
	}
	cs, _ := st.stored(t, alice)
	if len(cs.Sessions) != maxStateSessions {
		t.Errorf("alice's record holds %d sessions, want %d", len(cs.Sessions), maxStateSessions)
	}
	if cs.entry(session(3*maxStateSessions-1)) == nil || cs.entry(session(0)) != nil {
		t.Error("the record does not keep the most recently changed sessions")
	}
	// Subscriptions that grow the record past its bound push the older sessions out first.
	long := "be+mem://" + strings.Repeat("x", 900)
	var refused error
	for i := 0; i < maxSessionSubscriptions && refused == nil; i++ {
		uri := fmt.Sprintf("%s/%d", long, i)
		refused = st.updateSubscriptions(ctx, session(0), alice, uri, uri, true, nil)
	}
	if !errors.Is(refused, errStateBound) {
		t.Errorf("a session's subscriptions over %d bytes: %v, want errStateBound", maxStateBytes, refused)
	}
	// The bound is on the record's content; sealed, it takes at most SealedLen of that.
	if v, _, _ := kv.Get(ctx, stateKey(alice)); len(v) > seal.SealedLen(maxStateBytes) {
		t.Errorf("alice's record is %d bytes, over %d", len(v), seal.SealedLen(maxStateBytes))
	}
	if plain, _ := st.stored(t, alice); len(mustJSON(t, plain)) > maxStateBytes {
		t.Errorf("alice's record holds %d bytes, over %d", len(mustJSON(t, plain)), maxStateBytes)
	}
	st.levelTTL = 0 // read from the store, not this replica's cache
	if got := st.level(ctx, session(1000), bob); got != "debug" {
		t.Errorf("bob's level = %q after alice's sessions, want debug", got)
	}
}

// TestPacedRestart: a change of a session's subscriptions restarts its GET stream's listen at
// once when the listen has run restartInterval, else once it has: one restart, later, however
// many changes arrive meanwhile. Timed on a manual clock and its own timers (sessionState.now
// and after), so that nothing waits for real time.
func TestPacedRestart(t *testing.T) {
	clock := mcptest.NewClock(time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC))
	st, err := newSessionState(nil, testKeyRing(t), nil, slog.New(slog.DiscardHandler), clock.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	type timer struct {
		d time.Duration
		f func()
	}
	var timers []timer
	st.after = func(d time.Duration, f func()) func() bool {
		timers = append(timers, timer{d, f})
		return func() bool { return false }
	}
	restarts := 0
	restart := func() { restarts++ }

	// A listen that has run the interval restarts at once.
	old := st.paced(clock.Now().Add(-restartInterval), restart)
	old()
	if restarts != 1 || len(timers) != 0 {
		t.Fatalf("a listen that ran %v: %d restarts, %d timers; want one restart at once", restartInterval, restarts, len(timers))
	}

	// A listen started 300 ms ago restarts once it has run the interval, once for many changes.
	restarts = 0
	changed := st.paced(clock.Now().Add(-300*time.Millisecond), restart)
	for range 10 {
		changed()
	}
	if restarts != 0 || len(timers) != 1 || timers[0].d != restartInterval-300*time.Millisecond {
		t.Fatalf("ten changes to a listen 300ms old: %d restarts, timers %v; want one timer for the rest of the interval", restarts, timers)
	}
	timers[0].f()
	changed()
	if restarts != 1 || len(timers) != 1 {
		t.Fatalf("after the interval: %d restarts, %d timers; want one restart", restarts, len(timers))
	}
}

// TestSessionStateStalledStore: with the shared store stalled (a real redis-server paused,
// configured with timeouts far longer than the edge's own bound), a 2025-11-25 client's
// logging/setLevel, resources/subscribe and resources/unsubscribe are answered as a 2026-07-28
// client is when the store cannot carry its request: 503, -32014, Retry-After 1, saying what was
// not recorded; the go-sdk client takes it as transient and keeps its session, whose next call
// goes on without log messages, each within the edge's bound on the store (stateStoreTimeout)
// rather than the store's own timeouts and retries. Before, both waited as long as the store
// client did; and the refusal was -32603 in-band with 200 and no Retry-After, which a client
// cannot tell from the gateway's own fault nor knows when to send again.
func TestSessionStateStalledStore(t *testing.T) {
	srv := testredis.Start(t)
	kv, err := store.NewRedis(store.RedisConfig{URL: srv.URL(), ReadTimeout: 10 * time.Minute, WriteTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kv.Close() })
	be := mcptest.StartServer(t, "be", chattyTool())
	gw, e := startLegacyGateway(t, gwSpec{EdgeDeps: Deps{State: kv}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	e.state.storeTimeout = 200 * time.Millisecond
	logs := newLogSink()
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithLogging(logs.handler))
	srv.Pause()
	defer srv.Resume()
	ctx, cancel := context.WithTimeout(t.Context(), asksHang) // fail-safe, not a timing
	defer cancel()
	err = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"})
	if err == nil || !strings.Contains(err.Error(), http.StatusText(http.StatusServiceUnavailable)) {
		t.Fatalf("setLevel with the store stalled: %v, want 503", err)
	}
	h := legacyHeaders("2025-11-25", cs.ID())
	for _, c := range []struct{ body, says string }{
		{`{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"debug"}}`, "the log level could not be recorded"},
		{`{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"be+mem://r/1"}}`, "the subscription could not be recorded"},
		{`{"jsonrpc":"2.0","id":7,"method":"resources/unsubscribe","params":{"uri":"be+mem://r/1"}}`, "the subscription could not be recorded"},
	} {
		r := do(t, "POST", gw.URL, h, c.body)
		var m struct {
			ID    int `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(r.Body, &m)
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" || m.ID != 7 ||
			m.Error.Code != jsonrpc.CodeUnavailable || !strings.Contains(m.Error.Message, c.says) {
			t.Errorf("%s with the store stalled: %d Retry-After %q %s, want 503 -32014 with Retry-After 1 saying %q",
				c.body, r.Status, r.Header.Get("Retry-After"), r.Body, c.says)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__chatty", Arguments: map[string]any{"tag": "s"}})
	if err != nil || res.IsError || mcptest.ResultText(res) != "done" {
		t.Fatalf("tools/call with the store stalled: %v %+v", err, res)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if len(logs.got) != 0 {
		t.Errorf("log messages %q with no level recorded", logs.got)
	}
}
