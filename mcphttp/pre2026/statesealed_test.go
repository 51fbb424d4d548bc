//lint:file-ignore SA1019 pre-2026 clients still use logging, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package pre2026

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// The canaries of the sealed-record tests: what a subscribed URI may carry.
const (
	canaryPlain   = "CustomerAcmeMailbox4711"
	canarySpelled = "PayrollFileQ3x9"
)

// TestSessionStateSealedInRedis: a go-sdk client pinned to 2025-11-25 whose GET stream replica
// A holds and whose POSTs reach replica B (sharing a real redis-server) sets its log level and
// subscribes to two resources whose URIs carry user data, one of them spelled otherwise than
// in its normal form (percent-encoded non-ASCII, kept in the record as the client wrote it).
// Replica A still matches the backend's updates to the session and relays them under the
// client's spelling; and then no Redis key or value, and no publication made meanwhile, holds
// either canary. Before, the caller's record held both in clear, twice for the spelled one.
func TestSessionStateSealedInRedis(t *testing.T) {
	srv := testredis.Start(t)
	published := watchRedisPublications(t, srv)
	be := mcptest.StartServer(t, "be", mcptest.WithSubscriptions(), numberedResources())
	a, b, sa, _ := twoReplicasOn(t, srv, be, mcphttp.Config{})
	rt := newRouteTransport(t, a.URL)
	rt.post.Store(&b.URL)
	updates := &mcptest.ResourceUpdates{}
	cs := mcptest.Connect(t, b.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithResourceUpdated(updates.Handler), mcptest.WithRoundTripper(rt))
	for i := 0; !watching(sa); i++ {
		if i == 1000 {
			t.Fatal("the client's GET stream never reached replica A")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx := t.Context()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	plain, spelled := "be+mem://r/"+canaryPlain, "be+mem://r/%C3%A9"+canarySpelled
	for _, uri := range []string{plain, spelled} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	pokeUntil(t, be, updates, plain, "mem://r/"+canaryPlain)
	pokeUntil(t, be, updates, spelled, "mem://r/é"+canarySpelled, "mem://r/%C3%A9"+canarySpelled)

	values := redisValues(t, srv)
	var dump strings.Builder
	records := 0
	for k, v := range values {
		dump.WriteString(k + " " + v + "\n")
		if cs, clear, err := sa.state.decode([]byte(v)); err == nil && !clear && len(cs.Sessions) == 1 && len(cs.Sessions[0].URIs) == 2 {
			records++
		}
	}
	if records != 1 {
		t.Errorf("%d sealed records of the session's two subscriptions in Redis, want 1", records)
	}
	for _, c := range []string{canaryPlain, canarySpelled} {
		dump := dump.String()
		if i := strings.Index(dump, c); i >= 0 {
			t.Errorf("Redis holds %s in clear: …%s…", c, dump[max(0, i-200):min(len(dump), i+100)])
		}
		if p := published(); strings.Contains(p, c) {
			t.Errorf("a publication carried %s in clear:\n%s", c, p)
		}
	}
	if p := published(); !strings.Contains(p, stateTopic) {
		t.Errorf("no state notice was watched; publications:\n%s", p)
	}
}

// redisValues is every key of srv and its value, each read as its type reads it.
func redisValues(t *testing.T, srv *testredis.Server) map[string]string {
	t.Helper()
	keys, err := srv.Do("KEYS", "*")
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{}
	for _, k := range strings.Fields(keys) {
		typ, err := srv.Do("TYPE", k)
		if err != nil {
			t.Fatal(err)
		}
		read := map[string][]string{"string": {"GET", k}, "hash": {"HGETALL", k}, "list": {"LRANGE", k, "0", "-1"},
			"set": {"SMEMBERS", k}, "zset": {"ZRANGE", k, "0", "-1"}}[typ]
		if read == nil {
			t.Fatalf("redis key %q of type %s not read", k, typ)
		}
		if values[k], err = srv.Do(read...); err != nil {
			t.Fatal(err)
		}
	}
	return values
}

// watchRedisPublications records every publication on srv from now on (PSUBSCRIBE *);
// published returns them so far, each as its channel and message.
func watchRedisPublications(t *testing.T, srv *testredis.Server) (published func() string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: srv.Password()})
	t.Cleanup(func() { _ = c.Close() })
	ps := c.PSubscribe(t.Context(), "*")
	if _, err := ps.Receive(t.Context()); err != nil { // the subscription is in place
		t.Fatal(err)
	}
	var mu sync.Mutex
	var all strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range ps.Channel() {
			mu.Lock()
			all.WriteString(m.Channel + " " + m.Payload + "\n")
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ps.Close()
		<-done
	})
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return all.String()
	}
}

// stateFixture is a sessionState on a process-local store and a manual clock, its warnings
// kept.
type stateFixture struct {
	st    *sessionState
	kv    *store.Memory
	clock *mcptest.Clock
	logs  *syncBuffer
}

func newStateFixture(t *testing.T) *stateFixture {
	t.Helper()
	clock := mcptest.NewClock(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	kv, err := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	st, err := newSessionState(kv, testKeyRing(t), nil, slog.New(slog.NewJSONHandler(logs, nil)), clock.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.levelTTL = 0 // every read goes to the store
	return &stateFixture{st: st, kv: kv, clock: clock, logs: logs}
}

// session is a session of the fixture's, numbered n, open for an hour.
func (f *stateFixture) session(n byte) *legacysession.Session {
	s := &legacysession.Session{Version: "2025-11-25", Expires: f.clock.Now().Add(time.Hour)}
	s.Nonce[0] = n
	return s
}

// syncBuffer is a bytes.Buffer a logger may write to from any goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestSessionStateClearRecordResealed: a record the release before sealing wrote in clear (the
// rolling update: its replicas and the new ones share the store) is read as it was (level,
// subscriptions and their spellings), and once read is in the store sealed, keeping its expiry;
// read by a change, it is written back sealed with the change. Neither holds a URI in clear
// afterwards.
func TestSessionStateClearRecordResealed(t *testing.T) {
	const alice, bob = "https://idp#alice", "https://idp#bob"
	f := newStateFixture(t)
	ctx := t.Context()
	old := func(caller string, s *legacysession.Session) {
		rec := callerState{Sessions: []sessionEntry{{Key: s.Key(), Expires: s.Expires.Unix(), Level: "warning",
			URIs: []string{"be+mem://r/" + canaryPlain, "be+mem://r/é" + canarySpelled},
			As:   map[string]string{"be+mem://r/é" + canarySpelled: "be+mem://r/%C3%A9" + canarySpelled}}}}
		if err := f.kv.Set(ctx, stateKey(caller), mustJSON(t, rec), 30*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	inClear := func(caller string) bool {
		v, _, err := f.kv.Get(ctx, stateKey(caller))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Contains(v, []byte(canaryPlain)) || bytes.Contains(v, []byte(canarySpelled))
	}
	sa, sb := f.session(1), f.session(2)
	old(alice, sa)
	if got := f.st.level(ctx, sa, alice); got != "warning" {
		t.Errorf("level from a record in clear = %q, want warning", got)
	}
	if inClear(alice) {
		t.Error("a record in clear stays in clear once read")
	}
	uris, as, err := f.st.subscriptions(ctx, sa, alice)
	if err != nil || len(uris) != 2 || as["be+mem://r/é"+canarySpelled] != "be+mem://r/%C3%A9"+canarySpelled {
		t.Errorf("subscriptions once sealed again: %q %q %v", uris, as, err)
	}
	// Sealed in place: the record still expires when the previous release said.
	f.clock.Advance(31 * time.Minute)
	if _, found, _ := f.kv.Get(ctx, stateKey(alice)); found {
		t.Error("the record sealed again outlived its expiry")
	}

	old(bob, sb)
	if err := f.st.updateSubscriptions(ctx, sb, bob, "be+mem://r/new", "be+mem://r/new", true, nil); err != nil {
		t.Fatal(err)
	}
	if inClear(bob) {
		t.Error("a record in clear stays in clear once changed")
	}
	if uris, _, err := f.st.subscriptions(ctx, sb, bob); err != nil || len(uris) != 3 {
		t.Errorf("subscriptions after a change of a record in clear: %q %v, want the old two and the new one", uris, err)
	}
}

// TestSessionStateRecordThatDoesNotOpen: a stored record that does not open (sealed under a key
// the ring no longer holds, one byte altered, another purpose's token, cut short, larger than
// any record, not a record at all, in clear or sealed) counts as no level and no subscriptions:
// nothing fails, nothing panics, the warning names neither URI nor record and comes once
// however often the record is read, and the session's next change writes a record that opens.
func TestSessionStateRecordThatDoesNotOpen(t *testing.T) {
	rotated := testKeyRing(t, seal.Key{ID: "gone", Secret: bytes.Repeat([]byte("g"), 32)})
	probe := newStateFixture(t)
	rec := mustJSON(t, callerState{Sessions: []sessionEntry{{Key: probe.session(1).Key(), Expires: probe.clock.Now().Add(time.Hour).Unix(),
		Level: "debug", URIs: []string{"be+mem://r/" + canaryPlain}}}})
	sealedBy := func(s *seal.Sealer, pt []byte) string {
		tok, err := s.Seal(pt)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	good := sealedBy(probe.st.sealer, rec)
	flipped := []byte(good)
	flipped[len(flipped)-5] = map[bool]byte{true: 'B', false: 'A'}[flipped[len(flipped)-5] == 'A']
	for name, v := range map[string]string{
		"rotated-out key": sealedBy(rotated.SealerUpTo(purposeSessionState, seal.SealedLen(maxStateBytes)), rec),
		"altered":         string(flipped),
		"other purpose":   sealedBy(testKeyRing(t).Sealer(purposeAnswerID), rec),
		"cut short":       good[:len(good)/2],
		"oversized":       good + strings.Repeat("A", seal.SealedLen(maxStateBytes)),
		"not a record":    sealedBy(probe.st.sealer, []byte(`["`+canaryPlain+`"]`)),
		"clear, broken":   `{"s":[{"k":"` + canaryPlain,
		"clear, too long": `{"s":[],"x":"` + canaryPlain + strings.Repeat("x", maxStateBytes) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newStateFixture(t)
			ctx := t.Context()
			const alice = "https://idp#alice"
			sess := f.session(1)
			if err := f.kv.Set(ctx, stateKey(alice), []byte(v), time.Hour); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if got := f.st.level(ctx, sess, alice); got != "" {
					t.Errorf("level %q from a record that does not open", got)
				}
				if uris, _, err := f.st.subscriptions(ctx, sess, alice); err != nil || uris != nil {
					t.Errorf("subscriptions %q, %v from a record that does not open; want none, no error", uris, err)
				}
			}
			logs := f.logs.String()
			if n := strings.Count(logs, "does not open"); n != 1 {
				t.Errorf("%d warnings for one record read six times, want 1:\n%s", n, logs)
			}
			if strings.Contains(logs, canaryPlain) || strings.Contains(logs, v[:min(len(v), 24)]) {
				t.Errorf("the warning quotes the record:\n%s", logs)
			}
			if err := f.st.setLevel(ctx, sess, alice, "error"); err != nil {
				t.Fatalf("setLevel over a record that does not open: %v", err)
			}
			if cs, _ := f.st.stored(t, alice); cs.entry(sess) == nil || cs.entry(sess).Level != "error" {
				t.Errorf("the record written over it: %+v", cs)
			}
		})
	}
}

// TestSessionStateBoundSealed: the bound a caller meets is on its record's content
// (maxStateBytes), and what the store holds for it sealed is at most seal.SealedLen of that,
// 87,471 bytes (docs/protocol.md §9.6): a record filled to the bound seals within it, and a
// change past it is refused as before.
func TestSessionStateBoundSealed(t *testing.T) {
	if n := seal.SealedLen(maxStateBytes); n != 87471 {
		t.Errorf("a full record takes %d bytes sealed; the documents say 87,471", n)
	}
	f := newStateFixture(t)
	ctx := t.Context()
	const alice = "https://idp#alice"
	sess := f.session(1)
	var refused error
	for i := 0; refused == nil && i < maxSessionSubscriptions; i++ {
		uri := "be+mem://r/" + strings.Repeat("y", 1000) + string(rune('a'+i%26)) + strings.Repeat("z", i)
		refused = f.st.updateSubscriptions(ctx, sess, alice, uri, uri, true, nil)
	}
	if !errors.Is(refused, errStateBound) {
		t.Fatalf("a record filled past %d bytes: %v, want errStateBound", maxStateBytes, refused)
	}
	v, _, err := f.kv.Get(ctx, stateKey(alice))
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := f.st.stored(t, alice)
	plain, _ := json.Marshal(cs)
	if len(plain) > maxStateBytes || len(plain) < maxStateBytes-2200 || len(v) > seal.SealedLen(maxStateBytes) {
		t.Errorf("record of %d bytes, sealed %d; want near %d, sealed at most %d", len(plain), len(v), maxStateBytes, seal.SealedLen(maxStateBytes))
	}
}

// TestSessionStateUnopenedRecordsLogBounded: while the other replicas seal under a key this one
// does not hold yet (a key appended replica by replica), every caller's record it reads fails
// to open, each a record of its own. Its GET streams read them every recheckInterval, so a
// warning per record read would be a line per stream per interval; it warns once per
// unopenedLogEvery, however many records, callers and reads, and the next warning counts those
// not logged meanwhile. Before, the warning was kept back only for the last record logged, and
// two callers read in turn logged every read.
func TestSessionStateUnopenedRecordsLogBounded(t *testing.T) {
	f := newStateFixture(t)
	ctx := t.Context()
	newer := testKeyRing(t, seal.Key{ID: "newer", Secret: bytes.Repeat([]byte("n"), 32)}).
		SealerUpTo(purposeSessionState, seal.SealedLen(maxStateBytes))
	sess := f.session(1)
	const callers = 20
	for i := range callers {
		tok, err := newer.Seal(mustJSON(t, callerState{Sessions: []sessionEntry{{Key: sess.Key(), Expires: sess.Expires.Unix(), Level: "debug"}}}))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.kv.Set(ctx, stateKey(fmt.Sprint("caller-", i)), []byte(tok), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	readAll := func() {
		for i := range callers {
			if uris, _, err := f.st.subscriptions(ctx, sess, fmt.Sprint("caller-", i)); err != nil || uris != nil {
				t.Fatalf("subscriptions %q, %v from a record that does not open; want none, no error", uris, err)
			}
		}
	}
	readAll()
	readAll()
	if n := strings.Count(f.logs.String(), "does not open"); n != 1 {
		t.Fatalf("%d warnings for %d records read twice each, want 1:\n%s", n, callers, f.logs.String())
	}
	f.clock.Advance(unopenedLogEvery)
	readAll()
	logs := f.logs.String()
	if n := strings.Count(logs, "does not open"); n != 2 {
		t.Fatalf("%d warnings once unopenedLogEvery passed, want 2:\n%s", n, logs)
	}
	if want := fmt.Sprintf(`"not_logged":%d`, 2*callers-1); !strings.Contains(logs, want) {
		t.Errorf("the second warning does not count the %d records not logged (%s):\n%s", 2*callers-1, want, logs)
	}
}
