package pre2026

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// lostNotices is a pub/sub that loses every message, as Redis does one published while the
// other replicas' subscriptions are being made again; it counts what was published.
type lostNotices struct{ published atomic.Int64 }

func (n *lostNotices) Publish(context.Context, string, []byte) error {
	n.published.Add(1)
	return nil
}

func (n *lostNotices) Subscribe(context.Context, string, func([]byte)) {}

// writeCounting counts the writes of a store.
type writeCounting struct {
	StateStore
	writes atomic.Int64
}

func (w *writeCounting) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	w.writes.Add(1)
	return w.StateStore.Set(ctx, key, value, ttl)
}

// TestSessionStateRepeatWritesNothing: a logging/setLevel of the level the session has, and a
// resources/subscribe of a URI it has (or an unsubscribe of one it has not), write nothing to
// the store, publish no notice and restart no GET stream's listen; each real change, an alternation included, is one write and
// one notice. A flood of repeats costs the store reads only; a flood of alternations is bounded
// by the caller's request rate, as any request is.
func TestSessionStateRepeatWritesNothing(t *testing.T) {
	clock := mcptest.NewClock(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	mem, err := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	kv, notices := &writeCounting{StateStore: mem}, &lostNotices{}
	st, err := newSessionState(kv, testKeyRing(t), notices, slog.New(slog.DiscardHandler), clock.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const alice, uri = "https://idp#alice", "be+mem://r/1"
	sess := &legacysession.Session{Version: "2025-11-25", Expires: clock.Now().Add(time.Hour)}
	expect := func(what string, writes, published int64) {
		t.Helper()
		if w, p := kv.writes.Load(), notices.published.Load(); w != writes || p != published {
			t.Errorf("%s: %d writes and %d notices in all, want %d and %d", what, w, p, writes, published)
		}
	}
	for range 5 {
		if err := st.setLevel(ctx, sess, alice, "debug"); err != nil {
			t.Fatal(err)
		}
	}
	expect("setLevel debug five times", 1, 1)
	restarts := 0
	defer st.watch(sess.Key(), func() { restarts++ })()
	for range 5 {
		if err := st.updateSubscriptions(ctx, sess, alice, uri, uri, true, nil); err != nil {
			t.Fatal(err)
		}
	}
	expect("subscribe one URI five times", 2, 2)
	if restarts != 1 {
		t.Errorf("subscribe one URI five times: this replica's GET stream restarted %d times, want 1", restarts)
	}
	// The session's entry was made anew: its first unsubscribe of a URI it does not hold is
	// recorded (sessionEntry.Gone: a GET stream may hold it from a record the store forgot),
	// once; its repeats write nothing.
	for range 5 {
		if err := st.updateSubscriptions(ctx, sess, alice, "be+mem://r/never", "be+mem://r/never", false, nil); err != nil {
			t.Fatal(err)
		}
	}
	expect("unsubscribe a URI never subscribed five times", 3, 3)
	for i, level := range []string{"info", "debug", "info", "debug"} {
		if err := st.setLevel(ctx, sess, alice, level); err != nil {
			t.Fatal(err)
		}
		expect("setLevel alternating", int64(4+i), int64(4+i))
	}
}

// TestLevelNoticeLost: a replica that missed the notice of a session's new level (every notice
// lost here) serves the level it cached for at most levelCacheTTL (5 s, docs/protocol.md §9.6),
// then reads the new one from the store.
func TestLevelNoticeLost(t *testing.T) {
	clock := mcptest.NewClock(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	mem, err := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	replica := func() *sessionState {
		st, err := newSessionState(mem, testKeyRing(t), &lostNotices{}, slog.New(slog.DiscardHandler), clock.Now, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b := replica(), replica()
	ctx := t.Context()
	const alice = "https://idp#alice"
	sess := &legacysession.Session{Version: "2025-11-25", Expires: clock.Now().Add(time.Hour)}
	sess.Nonce[0] = 1
	if err := a.setLevel(ctx, sess, alice, "debug"); err != nil {
		t.Fatal(err)
	}
	if got := b.level(ctx, sess, alice); got != "debug" {
		t.Fatalf("B reads %q, want debug", got)
	}
	if err := a.setLevel(ctx, sess, alice, "error"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(levelCacheTTL - time.Millisecond)
	if got := b.level(ctx, sess, alice); got != "debug" {
		t.Errorf("B within the cache's life: %q, want the cached debug", got)
	}
	clock.Advance(time.Millisecond)
	if got := b.level(ctx, sess, alice); got != "error" {
		t.Errorf("B %v after the change: %q, want error", levelCacheTTL, got)
	}
	if levelCacheTTL != 5*time.Second {
		t.Errorf("levelCacheTTL is %v; docs/protocol.md §9.6 says 5 seconds", levelCacheTTL)
	}
}

// TestSubscriptionNoticeLost: a 2025-11-25 client's GET stream whose replica missed the notice
// of a change of the session's subscriptions (made on another replica, its notice lost)
// applies the change at the next recheck of the set (recheckInterval, shortened here) and
// relays the new subscription's updates. Before, it kept the old set until the client opened
// its GET stream again, which may be hours.
func TestSubscriptionNoticeLost(t *testing.T) {
	mem, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	be := mcptest.StartServer(t, "be", mcptest.WithSubscriptions(), numberedResources())
	gw, e := startLegacyGateway(t, gwSpec{EdgeDeps: Deps{State: mem}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	e.state.recheckEvery = 20 * time.Millisecond // before any GET stream starts
	e.state.restartEvery = 0
	updates := &mcptest.ResourceUpdates{}
	cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-11-25"), mcptest.WithResourceUpdated(updates.Handler))
	for i := 0; !watching(e); i++ {
		if i == 1000 {
			t.Fatal("the client's GET stream never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	sess, err := e.sessions.Open(cs.ID(), legacysession.Anonymous)
	if err != nil {
		t.Fatal(err)
	}
	// Another replica, sharing the store, whose notices are all lost.
	other, err := newSessionState(mem, testKeyRing(t), &lostNotices{}, slog.New(slog.DiscardHandler), time.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	const uri = "be+mem://r/late"
	if err := other.updateSubscriptions(t.Context(), &sess, stateCaller(&sess, nil), uri, uri, true, nil); err != nil {
		t.Fatal(err)
	}
	got := pokeUntil(t, be, updates, uri, "mem://r/late")
	if !slices.Contains(got, uri) {
		t.Fatalf("updates %q", got)
	}
}

// TestRecheckStops: a recheck that finds the set unchanged reads it again later and restarts
// nothing; one that finds it changed restarts the listen once and reads no more; once
// stopped (its listen over), none is pending.
func TestRecheckStops(t *testing.T) {
	clock := mcptest.NewClock(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	st, err := newSessionState(nil, testKeyRing(t), nil, slog.New(slog.DiscardHandler), clock.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var pending []func()
	st.after = func(_ time.Duration, f func()) func() bool {
		mu.Lock()
		defer mu.Unlock()
		i := len(pending)
		pending = append(pending, f)
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			was := pending[i] != nil
			pending[i] = nil
			return was
		}
	}
	fire := func() int {
		mu.Lock()
		var due []func()
		for i, f := range pending {
			if f != nil {
				due = append(due, f)
				pending[i] = nil
			}
		}
		mu.Unlock()
		for _, f := range due {
			f()
		}
		return len(due)
	}
	ctx := t.Context()
	const alice = "https://idp#alice"
	sess := &legacysession.Session{Version: "2025-11-25", Expires: clock.Now().Add(time.Hour)}
	if err := st.updateSubscriptions(ctx, sess, alice, "be+mem://r/1", "be+mem://r/1", true, nil); err != nil {
		t.Fatal(err)
	}
	restarts := 0
	stop := st.recheck(ctx, sess, alice, heldSet{uris: []string{"be+mem://r/1"}}, func() { restarts++ })
	for range 3 {
		if fire() != 1 || restarts != 0 {
			t.Fatalf("an unchanged set: %d restarts, want a recheck pending and none", restarts)
		}
	}
	if err := st.updateSubscriptions(ctx, sess, alice, "be+mem://r/2", "be+mem://r/2", true, nil); err != nil {
		t.Fatal(err)
	}
	if fire() != 1 || restarts != 1 || fire() != 0 {
		t.Fatalf("a changed set: %d restarts, want 1 and no recheck after it", restarts)
	}
	stop()

	stop = st.recheck(ctx, sess, alice, heldSet{}, func() { restarts++ })
	stop()
	if n := fire(); n != 0 {
		t.Errorf("%d rechecks pending once stopped", n)
	}
}

// TestSessionStateChangesPaced: one caller's changes of its sessions' state are paced across
// replicas, stateChangeBurst back to back and stateChangeRate a second after: a 2025-11-25
// client alternating its log level gets its first 200 changes, then 429 with Retry-After, and
// is served again once the pace allows; a repeat of what the record holds, which writes
// nothing, is never refused; another caller's changes are not held up. Before, every
// alternation was one read and one write of the caller's whole record, as fast as the client
// sent them.
func TestSessionStateChangesPaced(t *testing.T) {
	clock := mcptest.NewClock(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	mem, err := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	be := mcptest.StartServer(t, "be")
	gw, _ := startLegacyGateway(t, gwSpec{Server: mcphttp.Config{TrustedProxies: []string{"127.0.0.1/32", "::1/128"}},
		Deps: mcphttp.Deps{Clock: clock.Now}, EdgeDeps: Deps{State: mem}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	session := func(client string) http.Header {
		sid, _ := legacyInit(t, gw.URL, "2025-11-25", `{}`, "X-Forwarded-For", client)
		h := legacyHeaders("2025-11-25", sid)
		h.Set("X-Forwarded-For", client)
		return h
	}
	setLevel := func(h http.Header, level string) *response {
		return do(t, "POST", gw.URL, h, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"`+level+`"}}`)
	}
	busy, quiet := session("192.0.2.1"), session("192.0.2.2")
	levels := []string{"debug", "info"}
	for i := range stateChangeBurst {
		if r := setLevel(busy, levels[i%2]); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"result":{}`) {
			t.Fatalf("change %d within the burst: %d %s", i, r.Status, r.Body)
		}
	}
	r := setLevel(busy, levels[stateChangeBurst%2])
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("change %d, past the burst: %d %s, want 429 with Retry-After", stateChangeBurst+1, r.Status, r.Body)
	}
	if r := setLevel(busy, levels[(stateChangeBurst-1)%2]); r.Status != http.StatusOK {
		t.Errorf("a repeat of the level the session has, past the pace: %d %s, want {}", r.Status, r.Body)
	}
	if r := setLevel(quiet, "debug"); r.Status != http.StatusOK {
		t.Errorf("another client's change: %d %s", r.Status, r.Body)
	}
	clock.Advance(time.Second / stateChangeRate)
	if r := setLevel(busy, levels[stateChangeBurst%2]); r.Status != http.StatusOK {
		t.Errorf("a change once the pace allows: %d %s", r.Status, r.Body)
	}
}

// TestRecheckSpread: the GET streams a replica holds read their records at times spread over
// the interval, not in step: streams opened together (clients reconnecting after a replica's
// restart, or at the end of the configuration a reload replaced) schedule their first recheck
// each after its own share of recheckEvery, between half and all of it, so that their reads,
// one per stream per interval, do not reach the store in one burst. Before, every first
// recheck waited exactly recheckEvery, and streams opened in the same second read in the same
// second every interval after. Read on the timers the rechecks ask for; nothing waits.
func TestRecheckSpread(t *testing.T) {
	clock := mcptest.NewClock(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	st, err := newSessionState(nil, testKeyRing(t), nil, slog.New(slog.DiscardHandler), clock.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	var delays []time.Duration
	st.after = func(d time.Duration, _ func()) func() bool {
		delays = append(delays, d)
		return func() bool { return true }
	}
	sess := &legacysession.Session{Version: "2025-11-25", Expires: clock.Now().Add(time.Hour)}
	const streams = 64
	for range streams {
		defer st.recheck(t.Context(), sess, "https://idp#alice", heldSet{}, func() {})()
	}
	distinct := map[time.Duration]bool{}
	for _, d := range delays {
		if d < st.recheckEvery/2 || d > st.recheckEvery {
			t.Errorf("a first recheck after %v, want between %v and %v", d, st.recheckEvery/2, st.recheckEvery)
		}
		distinct[d] = true
	}
	if len(delays) != streams || len(distinct) < streams/2 {
		t.Errorf("%d streams scheduled %d first rechecks at %d distinct delays: in step", streams, len(delays), len(distinct))
	}
}

// TestRecheckKeepsSetOfRecordThatDoesNotOpen: a recheck that finds the caller's record sealed
// under a key this replica does not hold (written by a replica that has a key appended before
// this one) learns nothing of the session's set, as when the store cannot be read: the GET
// stream keeps the set its listen runs with, and rechecks again. Before, the record counted as
// no subscriptions and the recheck restarted the listen with none, so a client whose other
// session changed its level on an updated replica lost its resources/updated notifications
// for the rest of a key's rollout.
func TestRecheckKeepsSetOfRecordThatDoesNotOpen(t *testing.T) {
	clock := mcptest.NewClock(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	st, err := newSessionState(nil, testKeyRing(t), nil, slog.New(slog.DiscardHandler), clock.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pending []func()
	st.after = func(_ time.Duration, f func()) func() bool {
		pending = append(pending, f)
		return func() bool { return false }
	}
	fire := func() int {
		due := pending
		pending = nil
		for _, f := range due {
			f()
		}
		return len(due)
	}
	ctx := t.Context()
	const alice = "https://idp#alice"
	sess := &legacysession.Session{Version: "2025-11-25", Expires: clock.Now().Add(time.Hour)}
	sess.Nonce[0] = 1
	if err := st.updateSubscriptions(ctx, sess, alice, "be+mem://r/1", "be+mem://r/1", true, nil); err != nil {
		t.Fatal(err)
	}
	restarts := 0
	defer st.recheck(ctx, sess, alice, heldSet{uris: []string{"be+mem://r/1"}}, func() { restarts++ })()
	newer := testKeyRing(t, seal.Key{ID: "newer", Secret: bytes.Repeat([]byte("n"), 32)}).
		SealerUpTo(purposeSessionState, seal.SealedLen(maxStateBytes))
	tok, err := newer.Seal(mustJSON(t, callerState{Sessions: []sessionEntry{{Key: sess.Key(), Expires: sess.Expires.Unix(),
		URIs: []string{"be+mem://r/1"}}}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.kv.Set(ctx, stateKey(alice), []byte(tok), time.Hour); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if fire() != 1 || restarts != 0 {
			t.Fatalf("a record that does not open: %d restarts, want none and a recheck pending", restarts)
		}
	}
}
