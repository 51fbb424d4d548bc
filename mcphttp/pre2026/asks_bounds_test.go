package pre2026

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/metrics"
)

// TestAsksReplayRefusedBeforeRedis: once an answer id was used, a replay of it is refused on
// whichever replica it lands, without a notice published: on the replica that forwarded it (it
// heard the acknowledgement) and on a third one (it heard the asking replica say the id is
// used). Before, only the asking replica knew, so every replay crossed Redis.
func TestAsksReplayRefusedBeforeRedis(t *testing.T) {
	srv := testredis.Start(t)
	rigs := startRedisAsks(t, srv, nil, 3)
	a, b, c := rigs[0], rigs[1], rigs[2]
	waitSubscribed(t, rawRedis(t, srv), "bt:notice:"+usedTopic, 3)
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, a.b, sess, elicitReq)
	id := p.ids(t, 1)[0]
	if err := b.b.deliver(t.Context(), sess, testCaller, answer(id, acceptName)); err != nil {
		t.Fatalf("answer through B: %v", err)
	}
	if r := p.result(t); r.err != nil {
		t.Fatal(r.err)
	}
	mcptest.WaitFor(t, "C hears the id is used", func() bool { return c.b.isUsed(mustOpen(t, c.b, id)) })
	for _, rig := range []*asksRig{b, c} {
		published := &rig.b.notices.(*countingNotices).published
		before := published.Load()
		if err := rig.b.deliver(t.Context(), sess, testCaller, answer(id, acceptName)); !errors.Is(err, errBadAnswer) {
			t.Fatalf("replay: %v, want errBadAnswer", err)
		}
		if n := published.Load() - before; n != 0 {
			t.Errorf("a replay was published %d times", n)
		}
	}
}

// TestAsksGoneReplicaFailsFast: the first answer for a replica that is gone waits for its
// acknowledgement and is refused; the next ones for it are refused at once, with nothing
// published, instead of each waiting (and holding a forward) for the whole wait.
func TestAsksGoneReplicaFailsFast(t *testing.T) {
	srv := testredis.Start(t)
	rigs := startRedisAsks(t, srv, nil, 2)
	a, b := rigs[0], rigs[1]
	b.b.forwardTimeout = 200 * time.Millisecond
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, a.b, sess, elicitReq, samplingReq)
	ids := p.ids(t, 2)
	a.stop()
	waitSubscribed(t, rawRedis(t, srv), "bt:notice:"+a.b.topic, 0)
	if err := b.b.deliver(t.Context(), sess, testCaller, answer(ids[0], acceptName)); !errors.Is(err, errBadAnswer) {
		t.Fatalf("answer for a gone replica: %v, want errBadAnswer", err)
	}
	published := &b.b.notices.(*countingNotices).published
	before := published.Load()
	if err := b.b.deliver(t.Context(), sess, testCaller, answer(ids[1], samplingRes)); !errors.Is(err, errBadAnswer) {
		t.Fatalf("second answer for the gone replica: %v, want errBadAnswer", err)
	}
	if n := published.Load() - before; n != 0 {
		t.Errorf("an answer for a replica known to be gone was published %d times", n)
	}
	p.stop()
	p.result(t)
}

// TestAsksForwardsBoundedPerCaller: a caller's answers on their way to other replicas are
// bounded (MaxForwardsPerCaller); one more is refused at once as busy, while another caller's
// answer still goes.
func TestAsksForwardsBoundedPerCaller(t *testing.T) {
	srv := testredis.Start(t)
	ring := asksTestRing(t)
	newStore := func() store.Notices {
		st, err := store.NewRedis(store.RedisConfig{URL: srv.URL(), KeyPrefix: "bt:"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	// A asks and never acknowledges anything: its reply topic has no subscriber.
	a := newAsksRig(t, ring, asksConfig{}, newStore(), nil)
	b := newAsksRig(t, ring, asksConfig{MaxForwardsPerCaller: 2}, newStore(), nil)
	b.b.forwardTimeout = 2 * time.Second
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, a.b, sess, elicitReq, samplingReq, rootsReq)
	ids := p.ids(t, 3)
	var wg sync.WaitGroup
	for i, id := range ids[:2] {
		res := []string{acceptName, samplingRes}[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = b.b.deliver(context.Background(), sess, testCaller, answer(id, res))
		}()
	}
	mcptest.WaitFor(t, "two forwards under way", func() bool {
		b.b.mu.Lock()
		defer b.b.mu.Unlock()
		return b.b.forwardsOf[testCaller] == 2
	})
	if err := b.b.deliver(t.Context(), sess, testCaller, answer(ids[2], rootsRes)); !errors.Is(err, errAsksBusy) {
		t.Errorf("a third forward of the caller: %v, want errAsksBusy", err)
	}
	other := testSession(2, "p2", allCaps)
	q := startAsk(t, a.b, other, elicitReq)
	otherID := q.ids(t, 1)[0]
	if err := b.b.deliver(t.Context(), other, "https://idp.test#bob", answer(otherID, acceptName)); errors.Is(err, errAsksBusy) {
		t.Errorf("another caller's forward was refused as busy")
	}
	wg.Wait()
	p.stop()
	q.stop()
}

// stalledNotices stands for a Redis that stalls after a publish was written to it: the publish
// returns when its context ends, as the client gives up, and the notice goes out only when the
// test releases it, late, as the stalled server runs the command it had received.
type stalledNotices struct {
	store.Notices
	release chan struct{}
	late    sync.WaitGroup
}

// Publish holds msg until released and returns when ctx ends.
func (s *stalledNotices) Publish(ctx context.Context, topic string, msg []byte) error {
	s.late.Add(1)
	go func() {
		defer s.late.Done()
		<-s.release
		_ = s.Notices.Publish(context.Background(), topic, msg)
	}()
	<-ctx.Done()
	return ctx.Err()
}

// TestAsksRefusalIsFinal: an answer refused because Redis stalled (its publish did not complete
// within the forward's wait) is not taken when the stalled notice is delivered after all: the
// asking replica keeps waiting, and counts nothing. Before, the late notice was taken and the
// waiting call used the answer the client had been told was refused.
func TestAsksRefusalIsFinal(t *testing.T) {
	srv := testredis.Start(t)
	rigs := startRedisAsks(t, srv, nil, 2)
	a, b := rigs[0], rigs[1]
	stalled := &stalledNotices{Notices: b.b.notices, release: make(chan struct{})}
	b.b.notices = stalled
	b.b.forwardTimeout = 300 * time.Millisecond
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, a.b, sess, elicitReq)
	id := p.ids(t, 1)[0]
	if err := b.b.deliver(t.Context(), sess, testCaller, answer(id, acceptName)); err == nil {
		t.Fatal("an answer was taken while Redis was stalled")
	}
	close(stalled.release)
	stalled.late.Wait()
	// The late notice is on its way to A; whether A has handled it shows in its metrics (a
	// refused answer is counted nowhere) only by its absence, so wait the fail-safe time a
	// notice takes on loopback at most.
	time.Sleep(300 * time.Millisecond)
	p.stillWaiting(t)
	if got := a.outcome(t, metrics.AskKindElicitation, metrics.AskCrossReplica); got != 0 {
		t.Errorf("a refused answer was taken late (cross_replica = %v)", got)
	}
	p.stop()
	p.result(t)
}

// rawRedis is a plain client of srv for the tests' own checks.
func rawRedis(t *testing.T, srv *testredis.Server) *redis.Client {
	t.Helper()
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: srv.Password(), DisableIdentity: true})
	t.Cleanup(func() { _ = raw.Close() })
	return raw
}

// mustOpen opens an answer id minted by any rig of the ring.
func mustOpen(t *testing.T, b *asks, id string) *answerClaims {
	t.Helper()
	c, err := b.openAnswerID(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAnswerRefusalsSayWhy: an answer the gateway did not deliver is refused with what the
// client can act on: 429 with Retry-After when the caller's answers already on their way fill
// its budget, 503 with Retry-After when the store cannot carry it, and 400 for an answer nobody
// waits for, which sending again cannot help. Each keeps its status for a pre-2026 client.
func TestAnswerRefusalsSayWhy(t *testing.T) {
	tests := []struct {
		err        error
		status     int
		code       int
		retryAfter bool
	}{
		{errAsksBusy, http.StatusTooManyRequests, jsonrpc.CodeRateLimited, true},
		{fmt.Errorf("%w: %w", errAsksUnavailable, errors.New("redis: connection refused")), http.StatusServiceUnavailable, jsonrpc.CodeUnavailable, true},
		{errBadAnswer, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, false},
		{errAnswerID, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, false},
	}
	limited := func(d time.Duration, msg string) *mcphttp.Error { return mcphttp.LimitedError(d, msg, false) }
	for _, tt := range tests {
		e := mcphttp.MapError(answerRefused(tt.err, limited))
		if e.Status != tt.status || e.RPC == nil || e.RPC.Code != tt.code || (e.Header.Get("Retry-After") != "") != tt.retryAfter {
			t.Errorf("%v: %d %+v %v; want %d, code %d, Retry-After %v", tt.err, e.Status, e.RPC, e.Header, tt.status, tt.code, tt.retryAfter)
		}
		if !keepStatus(e.Status, e.RPC.Code) {
			t.Errorf("%v: status %d would be turned into an in-band error", tt.err, e.Status)
		}
	}
}

// TestAsksConcurrentReplayNotForwarded: the same answer POSTed again while it is still on its
// way to the asking replica is refused at once, with nothing published: a replay is refused
// before Redis is touched whether the first one has been acknowledged yet or not, so one
// answer id never puts more than one answer on the asking replica's topic.
func TestAsksConcurrentReplayNotForwarded(t *testing.T) {
	srv := testredis.Start(t)
	rigs := startRedisAsks(t, srv, nil, 2)
	a, b := rigs[0], rigs[1]
	b.b.forwardTimeout = 500 * time.Millisecond
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, a.b, sess, elicitReq)
	id := p.ids(t, 1)[0]
	// The asking replica stops hearing its topic: the first forward waits for its
	// acknowledgement, and the replays come while it does.
	a.stop()
	waitSubscribed(t, rawRedis(t, srv), "bt:notice:"+a.b.topic, 0)
	published := &b.b.notices.(*countingNotices).published
	before := published.Load()
	first := make(chan error, 1)
	go func() { first <- b.b.deliver(t.Context(), sess, testCaller, answer(id, acceptName)) }()
	mcptest.WaitFor(t, "the first answer is on its way", func() bool { return published.Load() > before })
	for range 3 {
		if err := b.b.deliver(t.Context(), sess, testCaller, answer(id, acceptName)); !errors.Is(err, errBadAnswer) {
			t.Fatalf("a replay while the first is on its way: %v, want errBadAnswer", err)
		}
	}
	<-first
	forwards := 0
	b.b.notices.(*countingNotices).answers.Range(func(any, any) bool { forwards++; return true })
	if forwards != 1 {
		t.Errorf("one answer id was forwarded %d times, want once", forwards)
	}
}

// stallingNotices publishes like its store, except to one topic, where a publish waits for
// its context to end: Redis slow to take one message.
type stallingNotices struct {
	store.Notices
	topic   string
	stalled chan struct{}
}

// Publish stalls on s.topic and publishes anything else.
func (s *stallingNotices) Publish(ctx context.Context, topic string, msg []byte) error {
	if topic != s.topic {
		return s.Notices.Publish(ctx, topic, msg)
	}
	select {
	case s.stalled <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestAsksSlowAcknowledgementHoldsUpNothing: an acknowledgement the asking replica cannot
// publish (Redis slow to take it, or a flood of forwarded answers) does not hold up the next
// answer forwarded to it. Before, the replica checked and acknowledged forwarded answers one
// at a time on its subscription, so the next answer waited behind the stalled one until the
// forwarding replica gave up, refused a good answer and took a live replica for gone.
func TestAsksSlowAcknowledgementHoldsUpNothing(t *testing.T) {
	srv := testredis.Start(t)
	ring := asksTestRing(t)
	raw := rawRedis(t, srv)
	newStore := func() store.Notices {
		st, err := store.NewRedis(store.RedisConfig{URL: srv.URL(), KeyPrefix: "bt:"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	slowTopic := replyTopic(random16())
	stalling := &stallingNotices{Notices: newStore(), topic: slowTopic, stalled: make(chan struct{}, 1)}
	a := newAsksRig(t, ring, asksConfig{}, stalling, nil)
	a.b.forwardTimeout = time.Minute // the stalled acknowledgement waits until the test ends
	b := newAsksRig(t, ring, asksConfig{}, newStore(), nil)
	b.b.forwardTimeout = 5 * time.Second
	for _, r := range []*asksRig{a, b} {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		r.b.start(ctx)
		waitSubscribed(t, raw, "bt:notice:"+r.b.topic, 1)
	}
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, a.b, sess, elicitReq)
	id := p.ids(t, 1)[0]

	// An answer A cannot take (its id is not one A minted), forwarded from a replica whose
	// reply topic Redis is slow to publish to: A's acknowledgement of it stalls.
	notice, err := json.Marshal(replyNotice{Type: noticeAnswer, Corr: hex.EncodeToString(make([]byte, 16)),
		From: slowTopic, Sealed: "not-a-sealed-answer"})
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Publish(t.Context(), "bt:notice:"+a.b.topic, notice).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stalling.stalled:
	case <-time.After(asksHang): // fail-safe
		t.Fatal("A never acknowledged the forwarded answer")
	}

	if err := b.b.deliver(t.Context(), sess, testCaller, answer(id, acceptName)); err != nil {
		t.Fatalf("answer through B while one of A's acknowledgements stalls: %v", err)
	}
	if r := p.result(t); r.err != nil || !strings.Contains(string(r.out), `"Ada"`) {
		t.Fatalf("round: %s, %v", r.out, r.err)
	}
	b.b.mu.Lock()
	_, gone := b.b.gone[a.b.replica]
	b.b.mu.Unlock()
	if gone {
		t.Error("B took A for gone")
	}
}

// TestAsksUsedIdsBounded: the answer ids a replica knows used are bounded: one caller's at most
// its share of maxUsed, and once at it the one of its ids known longest is forgotten to record
// the next, at the cost of recording one. Before, a full set was swept whole under the asks' one
// lock at every answer taken and, with nothing expired, the new id was not recorded: one caller
// that answered fast enough to fill it (every id lives until its deadline, 10 minutes) made every
// caller's answers pay a sweep of 100,000 entries, and their replays cross Redis.
func TestAsksUsedIdsBounded(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{}, nil, nil)
	deadline := time.Now().Add(time.Hour).UnixMilli()
	var first, last [16]byte
	for i := range maxUsed {
		last[0], last[1], last[2], last[15] = byte(i), byte(i>>8), byte(i>>16), 0xee
		if i == 0 {
			first = last
		}
		if i < maxUsed-1 {
			rig.b.mu.Lock()
			rig.b.markUsedLocked(last, [16]byte{}, "")
			rig.b.mu.Unlock()
			continue
		}
		// The last as another replica tells it, naming no caller.
		msg, _ := json.Marshal(usedNotice{R: hex.EncodeToString(last[:]), Deadline: deadline})
		rig.b.onUsed(msg)
	}
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, rig.b, sess, elicitReq)
	id := p.ids(t, 1)[0]
	if err := rig.b.deliver(t.Context(), sess, testCaller, answer(id, acceptName)); err != nil {
		t.Fatalf("answer: %v", err)
	}
	if r := p.result(t); r.err != nil {
		t.Fatal(r.err)
	}
	if !rig.b.isUsed(mustOpen(t, rig.b, id)) {
		t.Error("the id just used is not known used: a full set took no more")
	}
	rig.b.mu.Lock()
	n, _ := rig.b.used.Usage("c:")
	rig.b.mu.Unlock()
	if share := maxUsed / sharelru.CallerShareDivisor; n != share {
		t.Errorf("one caller has %d ids known used, want its share, %d", n, share)
	}
	if rig.b.isUsed(&answerClaims{r: first}) || !rig.b.isUsed(&answerClaims{r: last}) {
		t.Error("the caller's oldest id is still known, or its newest is not")
	}
}

// TestAsksUsedIdsPerCaller: the answer ids a replica knows used are bounded per caller: one
// caller whose answers fill the record (maxUsed ids, here told by another replica) pushes out
// only its own, never another caller's, whose replays stay refused before Redis. Before, the
// bound was the replica's alone, the oldest id out first, whoever's it was.
func TestAsksUsedIdsPerCaller(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{}, nil, nil)
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, rig.b, sess, elicitReq)
	id := p.ids(t, 1)[0]
	if err := rig.b.deliver(t.Context(), sess, testCaller, answer(id, acceptName)); err != nil {
		t.Fatalf("answer: %v", err)
	}
	if r := p.result(t); r.err != nil {
		t.Fatal(r.err)
	}
	deadline := time.Now().Add(time.Hour).UnixMilli()
	mallory := callerTag("https://idp.test#mallory")
	var last [16]byte
	for i := range maxUsed {
		last[0], last[1], last[2], last[15] = byte(i), byte(i>>8), byte(i>>16), 0xee
		if i < maxUsed-1 {
			rig.b.mu.Lock()
			rig.b.markUsedLocked(last, [16]byte{}, mallory)
			rig.b.mu.Unlock()
			continue
		}
		// The last as another replica tells it: the notice names the caller.
		msg, _ := json.Marshal(usedNotice{R: hex.EncodeToString(last[:]), Deadline: deadline, Caller: mallory})
		rig.b.onUsed(msg)
	}
	rig.b.mu.Lock()
	n, _ := rig.b.used.Usage("c:" + mallory)
	rig.b.mu.Unlock()
	if share := maxUsed / sharelru.CallerShareDivisor; n != share {
		t.Errorf("the filling caller has %d ids known used, want its share, %d", n, share)
	}
	if !rig.b.isUsed(mustOpen(t, rig.b, id)) {
		t.Error("another caller filling the ids known used pushed out this caller's")
	}
	if !rig.b.isUsed(&answerClaims{r: last}) {
		t.Error("the filling caller's newest id is not known used")
	}
}
