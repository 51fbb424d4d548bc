package pre2026

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/mrtr"
)

// asksHang bounds every wait of these tests, so broken asks fail instead of hanging.
const asksHang = 20 * time.Second

// asksTestRing is the key ring of the asks tests; every replica of a test shares it.
// testCaller is the caller every session of these tests belongs to.
const testCaller = "https://idp.test#alice"

func asksTestRing(tb testing.TB) *seal.KeyRing {
	tb.Helper()
	ring, err := seal.New(seal.Config{Keys: []seal.Key{{ID: "b1", Secret: bytes.Repeat([]byte("r"), 32)}}})
	if err != nil {
		tb.Fatal(err)
	}
	return ring
}

// asksRig is one asks component with its own metrics registry.
type asksRig struct {
	b   *asks
	reg *prometheus.Registry
	// stop ends the rig's notice subscriptions, as a replica that goes away (startRedisAsks).
	stop context.CancelFunc
}

// newAsksRig builds the asks over ring; clock nil means the real clock.
func newAsksRig(tb testing.TB, ring *seal.KeyRing, cfg asksConfig, notices store.Notices, clock *mcptest.Clock) *asksRig {
	tb.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, metrics.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	var now func() time.Time
	if clock != nil {
		now = clock.Now
	}
	return &asksRig{b: newAsks(cfg, ring, notices, m, now), reg: reg}
}

// count returns the value of one series of the asks' metrics, 0 when it does not exist.
func (r *asksRig) count(tb testing.TB, name string, labels map[string]string) float64 {
	tb.Helper()
	mfs, err := r.reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, s := range mf.GetMetric() {
			for _, lp := range s.GetLabel() {
				if labels[lp.GetName()] != lp.GetValue() {
					continue series
				}
			}
			if s.Counter != nil {
				return s.GetCounter().GetValue()
			}
			return s.GetGauge().GetValue()
		}
	}
	return 0
}

// outcome returns mcp_gateway_legacy_asks_total{kind,outcome}.
func (r *asksRig) outcome(tb testing.TB, kind, outcome string) float64 {
	tb.Helper()
	return r.count(tb, metrics.NameLegacyAsks, map[string]string{"kind": kind, "outcome": outcome})
}

// assertIdle fails unless the asks hold nothing: no waiter, no per-session count, no
// forwarded answer awaiting its acknowledgement, no tracked request, and a zero pending gauge.
func (r *asksRig) assertIdle(tb testing.TB) {
	tb.Helper()
	r.b.mu.Lock()
	w, s, f, run := len(r.b.waiters), len(r.b.perSession), len(r.b.forwards), len(r.b.running)
	r.b.mu.Unlock()
	if w+s+f+run != 0 {
		tb.Errorf("asks not idle: %d waiters, %d session counts, %d forwards, %d tracked", w, s, f, run)
	}
	if g := r.count(tb, metrics.NameLegacyAsksPending, nil); g != 0 {
		tb.Errorf("pending gauge %v, want 0", g)
	}
}

// waiting returns how many requests the asks wait for.
func (r *asksRig) waiting() int {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	return len(r.b.waiters)
}

// testSession is a legacy session with a distinct nonce n, principal p and capabilities caps.
func testSession(n byte, p, caps string) *legacysession.Session {
	s := &legacysession.Session{Version: "2025-11-25", Caps: json.RawMessage(caps), Principal: p}
	s.Nonce[0], s.Nonce[11] = n, n
	return s
}

// allCaps declares everything the edge can ask for.
const allCaps = `{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{}}`

var (
	elicitReq = era.InputRequest{Key: "name", Method: "elicitation/create", Capability: "elicitation.form",
		Params: json.RawMessage(`{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)}
	samplingReq = era.InputRequest{Key: "draft", Method: "sampling/createMessage", Capability: "sampling",
		Params: json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`)}
	rootsReq   = era.InputRequest{Key: "roots", Method: "roots/list", Capability: "roots"}
	confirmReq = era.InputRequest{Key: mrtr.ConfirmKey, Method: "elicitation/create", Capability: "elicitation.form",
		Params: json.RawMessage(`{"mode":"form","message":"Allow the call?","requestedSchema":{"type":"object","properties":{"approve":{"type":"boolean"}}}}`)}
)

const (
	acceptName  = `{"action":"accept","content":{"name":"Ada"}}`
	samplingRes = `{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}`
	rootsRes    = `{"roots":[]}`
)

// pendingAsk is an ask running in its own goroutine.
type pendingAsk struct {
	sent chan []byte // the messages written to the client
	done chan askResult
	stop context.CancelFunc
}

type askResult struct {
	out json.RawMessage
	err error
}

// startAsk runs ask for reqs on sess and waits until every request is written, or ask ended.
func startAsk(tb testing.TB, b *asks, sess *legacysession.Session, reqs ...era.InputRequest) *pendingAsk {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &pendingAsk{sent: make(chan []byte, len(reqs)), done: make(chan askResult, 1), stop: cancel}
	tb.Cleanup(cancel)
	go func() {
		out, _, err := b.ask(ctx, sess, testCaller, reqs, roundLimits{}, func(msg []byte) error {
			p.sent <- bytes.Clone(msg)
			return nil
		})
		p.done <- askResult{out, err}
	}()
	return p
}

// ids returns the answer ids of the n requests p wrote, in order.
func (p *pendingAsk) ids(tb testing.TB, n int) []string {
	tb.Helper()
	ids := make([]string, 0, n)
	for range n {
		select {
		case msg := <-p.sent:
			var m struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(msg, &m); err != nil || !strings.HasPrefix(m.ID, answerIDPrefix) {
				tb.Fatalf("written request %s has no answer id (%v)", msg, err)
			}
			ids = append(ids, m.ID)
		case r := <-p.done:
			tb.Fatalf("ask ended before writing its requests: %v", r.err)
		case <-time.After(asksHang): // fail-safe
			tb.Fatal("ask wrote nothing")
		}
	}
	return ids
}

// result waits for ask to return.
func (p *pendingAsk) result(tb testing.TB) askResult {
	tb.Helper()
	select {
	case r := <-p.done:
		return r
	case <-time.After(asksHang): // fail-safe
		tb.Fatal("ask did not return")
		return askResult{}
	}
}

// stillWaiting fails if ask has returned.
func (p *pendingAsk) stillWaiting(tb testing.TB) {
	tb.Helper()
	select {
	case r := <-p.done:
		tb.Fatalf("ask returned (%s, %v) while answers are missing", r.out, r.err)
	default:
	}
}

// answer is the client's JSON-RPC response with id and result.
func answer(id, result string) *jsonrpc.Message {
	return &jsonrpc.Message{ID: json.RawMessage(`"` + id + `"`), Result: json.RawMessage(result)}
}

// TestAsksLocalDelivery: ask writes one well-formed JSON-RPC request per entry, with the
// params as given; answers delivered on the same replica, in any order, come back as the
// inputResponses object in the entries' order, and the asks are left holding nothing.
func TestAsksLocalDelivery(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{}, nil, nil)
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, rig.b, sess, elicitReq, samplingReq, rootsReq)
	var msgs [][]byte
	for range 3 {
		msgs = append(msgs, <-p.sent)
	}
	ids := make([]string, 3)
	for i, want := range []era.InputRequest{elicitReq, samplingReq, rootsReq} {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(msgs[i], &m); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(m["id"], &ids[i]); err != nil {
			t.Fatal(err)
		}
		wantMsg := `{"jsonrpc":"2.0","id":"` + ids[i] + `","method":"` + want.Method + `"`
		if want.Params != nil {
			wantMsg += `,"params":` + string(want.Params)
		}
		if got := string(msgs[i]); got != wantMsg+"}" {
			t.Errorf("request %d:\n got %s\nwant %s}", i, got, wantMsg)
		}
		if _, err := jsonrpc.DecodeMessage(msgs[i], jsonrpc.Limits{MaxDepth: 64, MaxTokenBytes: 1 << 20}); err != nil {
			t.Errorf("request %d is not valid JSON-RPC: %v", i, err)
		}
	}
	if ids[0] == ids[1] || ids[1] == ids[2] {
		t.Fatalf("answer ids repeat: %v", ids)
	}
	ctx := context.Background()
	for _, a := range []*jsonrpc.Message{answer(ids[2], `{"roots":[]}`), answer(ids[0], acceptName)} {
		if err := rig.b.deliver(ctx, sess, testCaller, a); err != nil {
			t.Fatalf("deliver: %v", err)
		}
	}
	p.stillWaiting(t)
	if err := rig.b.deliver(ctx, sess, testCaller, answer(ids[1], samplingRes)); err != nil {
		t.Fatal(err)
	}
	r := p.result(t)
	want := `{"name":` + acceptName + `,"draft":` + samplingRes + `,"roots":{"roots":[]}}`
	if r.err != nil || string(r.out) != want {
		t.Fatalf("ask = %s, %v; want %s", r.out, r.err, want)
	}
	for kind, n := range map[string]float64{metrics.AskKindElicitation: 1, metrics.AskKindSampling: 1, metrics.AskKindRoots: 1} {
		if got := rig.outcome(t, kind, metrics.AskAnswered); got != n {
			t.Errorf("%s answered = %v, want %v", kind, got, n)
		}
	}
	rig.assertIdle(t)
}

// TestAsksRejectsBadAnswers: an answer whose id is forged, tampered with, sealed for another
// purpose, expired, bound to another session or principal, already used, or not a response at
// all is refused with errBadAnswer and wakes nobody; the genuine answer still works after them.
func TestAsksRejectsBadAnswers(t *testing.T) {
	ring := asksTestRing(t)
	clock := mcptest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	rig := newAsksRig(t, ring, asksConfig{Timeout: time.Hour}, nil, clock)
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, rig.b, sess, elicitReq, confirmReq)
	ids := p.ids(t, 2)
	ctx := context.Background()

	// The same plaintext sealed for the session-id purpose never opens as an answer id.
	claims, err := rig.b.openAnswerID(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	other := &asks{sealer: ring.Sealer("legacy-session")}
	otherPurpose, err := other.mintAnswerID(claims)
	if err != nil {
		t.Fatal(err)
	}
	tampered := []byte(ids[0])
	if c := &tampered[len(tampered)-5]; *c == 'A' {
		*c = 'B'
	} else {
		*c = 'A'
	}
	bad := map[string]struct {
		sess *legacysession.Session
		msg  *jsonrpc.Message
	}{
		"forged":          {sess, answer("g1.v1.b1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", acceptName)},
		"no prefix":       {sess, answer(strings.TrimPrefix(ids[0], answerIDPrefix), acceptName)},
		"number id":       {sess, &jsonrpc.Message{ID: json.RawMessage(`7`), Result: json.RawMessage(acceptName)}},
		"escaped id":      {sess, &jsonrpc.Message{ID: json.RawMessage(`"\u0067` + ids[0][1:] + `"`), Result: json.RawMessage(acceptName)}},
		"tampered":        {sess, answer(string(tampered), acceptName)},
		"other purpose":   {sess, answer(otherPurpose, acceptName)},
		"other session":   {testSession(2, "p1", allCaps), answer(ids[0], acceptName)},
		"other principal": {testSession(1, "p2", allCaps), answer(ids[0], acceptName)},
		"a request":       {sess, &jsonrpc.Message{ID: json.RawMessage(`"` + ids[0] + `"`), Method: "ping"}},
		"result and error": {sess, &jsonrpc.Message{ID: json.RawMessage(`"` + ids[0] + `"`),
			Result: json.RawMessage(acceptName), Error: jsonrpc.NewError(-1, "x")}},
	}
	for name, c := range bad {
		if err := rig.b.deliver(ctx, c.sess, testCaller, c.msg); !errors.Is(err, errBadAnswer) {
			t.Errorf("%s: deliver = %v, want errBadAnswer", name, err)
		}
	}
	// A result its request cannot take is named as such (the request still waits for a good
	// one), not refused as an answer nobody waits for.
	for _, res := range []string{`[1]`, `{"action":"maybe"}`, `{"content":{"name":"Ada"}}`, samplingRes} {
		var bad *badResultError
		if err := rig.b.deliver(ctx, sess, testCaller, answer(ids[0], res)); !errors.As(err, &bad) || bad.Method != "elicitation/create" {
			t.Errorf("%s: deliver = %v, want a bad result of elicitation/create", res, err)
		}
	}
	p.stillWaiting(t)
	if n := rig.waiting(); n != 2 {
		t.Fatalf("%d requests waiting after refused answers, want 2", n)
	}

	if err := rig.b.deliver(ctx, sess, testCaller, answer(ids[0], acceptName)); err != nil {
		t.Fatalf("genuine answer: %v", err)
	}
	if err := rig.b.deliver(ctx, sess, testCaller, answer(ids[0], acceptName)); !errors.Is(err, errBadAnswer) {
		t.Errorf("replayed answer: %v, want errBadAnswer", err)
	}
	// Past the deadline sealed in the id the answer is refused, though the round still waits
	// (its own timer, on the real clock, has an hour to go).
	clock.Advance(time.Hour)
	if err := rig.b.deliver(ctx, sess, testCaller, answer(ids[1], `{"action":"accept","content":{"approve":true}}`)); !errors.Is(err, errBadAnswer) {
		t.Errorf("expired answer: %v, want errBadAnswer", err)
	}
	p.stillWaiting(t)
	p.stop()
	if r := p.result(t); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("ask = %v, want context.Canceled", r.err)
	}
	if got := rig.outcome(t, metrics.AskKindConfirm, metrics.AskLost); got != 1 {
		t.Errorf("confirm lost = %v, want 1", got)
	}
	rig.assertIdle(t)
}

// TestAsksNoWaiter: on a single replica, an id that replica did not mint (other asks with
// the same keys) and an id whose round has ended both find nobody waiting: errBadAnswer.
func TestAsksNoWaiter(t *testing.T) {
	ring := asksTestRing(t)
	a := newAsksRig(t, ring, asksConfig{}, nil, nil)
	other := newAsksRig(t, ring, asksConfig{}, nil, nil)
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, other.b, sess, elicitReq)
	id := p.ids(t, 1)[0]
	ctx := context.Background()
	if err := a.b.deliver(ctx, sess, testCaller, answer(id, acceptName)); !errors.Is(err, errBadAnswer) {
		t.Fatalf("answer for another replica, no Redis: %v, want errBadAnswer", err)
	}
	p.stop()
	p.result(t)
	if err := other.b.deliver(ctx, sess, testCaller, answer(id, acceptName)); !errors.Is(err, errBadAnswer) {
		t.Fatalf("answer after the round ended: %v, want errBadAnswer", err)
	}
	a.assertIdle(t)
	other.assertIdle(t)
}

// TestAsksDeclineAndErrorAnswers: a declined elicitation is an answer (the backend or the
// confirmation decides what a decline means) counted as declined; a JSON-RPC error as the
// answer ends the round with *clientAnswerError and forgets its other requests.
func TestAsksDeclineAndErrorAnswers(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{}, nil, nil)
	sess := testSession(1, "p1", allCaps)
	ctx := context.Background()

	p := startAsk(t, rig.b, sess, confirmReq)
	id := p.ids(t, 1)[0]
	if err := rig.b.deliver(ctx, sess, testCaller, answer(id, `{"action":"decline"}`)); err != nil {
		t.Fatal(err)
	}
	if r := p.result(t); r.err != nil || string(r.out) != `{"`+mrtr.ConfirmKey+`":{"action":"decline"}}` {
		t.Fatalf("ask = %s, %v", r.out, r.err)
	}
	if got := rig.outcome(t, metrics.AskKindConfirm, metrics.AskDeclined); got != 1 {
		t.Errorf("confirm declined = %v, want 1", got)
	}

	p = startAsk(t, rig.b, sess, samplingReq, rootsReq)
	ids := p.ids(t, 2)
	refusal := &jsonrpc.Message{ID: json.RawMessage(`"` + ids[0] + `"`), Error: jsonrpc.NewError(-1, "User rejected sampling request")}
	if err := rig.b.deliver(ctx, sess, testCaller, refusal); err != nil {
		t.Fatal(err)
	}
	var ce *clientAnswerError
	if r := p.result(t); !errors.As(r.err, &ce) || ce.Key != "draft" || ce.Err.Message != "User rejected sampling request" {
		t.Fatalf("ask = %v, want the client's error for draft", r.err)
	}
	if err := rig.b.deliver(ctx, sess, testCaller, answer(ids[1], `{"roots":[]}`)); !errors.Is(err, errBadAnswer) {
		t.Errorf("answer to the rest of a failed round: %v, want errBadAnswer", err)
	}
	if got := rig.outcome(t, metrics.AskKindRoots, metrics.AskLost); got != 1 {
		t.Errorf("roots lost = %v, want 1", got)
	}
	rig.assertIdle(t)
}

// TestAsksTimeout: a round the client does not answer ends with errAskTimeout, and its
// requests are forgotten and counted as timed out.
func TestAsksTimeout(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{Timeout: 50 * time.Millisecond}, nil, nil)
	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, rig.b, sess, elicitReq, samplingReq)
	ids := p.ids(t, 2)
	if err := rig.b.deliver(context.Background(), sess, testCaller, answer(ids[0], acceptName)); err != nil &&
		!errors.Is(err, errBadAnswer) { // the round may already have timed out on a slow machine
		t.Fatal(err)
	}
	if r := p.result(t); !errors.Is(r.err, errAskTimeout) {
		t.Fatalf("ask = %v, want errAskTimeout", r.err)
	}
	if got := rig.outcome(t, metrics.AskKindSampling, metrics.AskTimeout); got != 1 {
		t.Errorf("sampling timeout = %v, want 1", got)
	}
	rig.assertIdle(t)
}

// TestAsksLimits: a round that would take a session past MaxPendingPerSession, or the
// replica past MaxPending, is refused with errAsksBusy before anything is written; other
// sessions are not affected by one session's limit, and the counts go down as rounds end.
func TestAsksLimits(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{MaxPendingPerSession: 2, MaxPending: 3}, nil, nil)
	s1, s2 := testSession(1, "p1", allCaps), testSession(2, "p1", allCaps)
	ctx := context.Background()
	wrote := false
	emit := func([]byte) error { wrote = true; return errors.New("a refused round was written") }

	if _, _, err := rig.b.ask(ctx, s1, testCaller, []era.InputRequest{elicitReq, samplingReq, rootsReq}, roundLimits{}, emit); !errors.Is(err, errAsksBusy) || wrote {
		t.Fatalf("three requests for a limit of two: %v (wrote %v), want errAsksBusy", err, wrote)
	}
	p1 := startAsk(t, rig.b, s1, elicitReq, samplingReq)
	ids := p1.ids(t, 2)
	if _, _, err := rig.b.ask(ctx, s1, testCaller, []era.InputRequest{rootsReq}, roundLimits{}, emit); !errors.Is(err, errAsksBusy) || wrote {
		t.Fatalf("third request of the session: %v (wrote %v), want errAsksBusy", err, wrote)
	}
	p2 := startAsk(t, rig.b, s2, rootsReq)
	p2.ids(t, 1)
	if _, _, err := rig.b.ask(ctx, testSession(3, "p1", allCaps), testCaller, []era.InputRequest{rootsReq}, roundLimits{}, emit); !errors.Is(err, errAsksBusy) || wrote {
		t.Fatalf("fourth request of the replica: %v (wrote %v), want errAsksBusy", err, wrote)
	}
	if err := rig.b.deliver(ctx, s1, testCaller, answer(ids[0], acceptName)); err != nil {
		t.Fatal(err)
	}
	// One answer frees one place of the session: a one-request round fits again.
	p3 := startAsk(t, rig.b, s1, rootsReq)
	p3.ids(t, 1)
	for _, p := range []*pendingAsk{p1, p2, p3} {
		p.stop()
		p.result(t)
	}
	rig.assertIdle(t)
}

// TestAsksCallerLimit: the sessions of one caller together wait for at most
// MaxPendingPerCaller answers, so opening more sessions does not buy more; another caller's
// rounds are not affected by it.
func TestAsksCallerLimit(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{MaxPendingPerSession: 2, MaxPendingPerCaller: 3}, nil, nil)
	wrote := false
	emit := func([]byte) error { wrote = true; return errors.New("a refused round was written") }
	p1 := startAsk(t, rig.b, testSession(1, "p1", allCaps), elicitReq, samplingReq)
	p1.ids(t, 2)
	p2 := startAsk(t, rig.b, testSession(2, "p1", allCaps), rootsReq)
	p2.ids(t, 1)
	if _, _, err := rig.b.ask(t.Context(), testSession(3, "p1", allCaps), testCaller, []era.InputRequest{rootsReq}, roundLimits{}, emit); !errors.Is(err, errAsksBusy) || wrote {
		t.Fatalf("a fourth request of the caller in a third session: %v (wrote %v), want errAsksBusy", err, wrote)
	}
	other := make(chan error, 1)
	go func() {
		_, _, err := rig.b.ask(t.Context(), testSession(4, "p2", allCaps), "https://idp.test#bob", []era.InputRequest{rootsReq}, roundLimits{},
			func([]byte) error { return errors.New("written") })
		other <- err
	}()
	if err := <-other; errors.Is(err, errAsksBusy) {
		t.Errorf("another caller's round was refused as busy")
	}
	for _, p := range []*pendingAsk{p1, p2} {
		p.stop()
		p.result(t)
	}
	rig.assertIdle(t)
}

// TestAsksCleanup: whichever way a round ends early (its context ends, the client's stream
// fails on the first or a later request), nothing is left behind (no waiter, no count, no
// goroutine) and an answer sent afterwards is refused.
func TestAsksCleanup(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{}, nil, nil)
	sess := testSession(1, "p1", allCaps)
	goroutines := runtime.NumGoroutine()

	p := startAsk(t, rig.b, sess, elicitReq, samplingReq)
	ids := p.ids(t, 2)
	p.stop()
	if r := p.result(t); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("ask = %v, want context.Canceled", r.err)
	}
	rig.assertIdle(t)
	if err := rig.b.deliver(context.Background(), sess, testCaller, answer(ids[0], acceptName)); !errors.Is(err, errBadAnswer) {
		t.Errorf("answer after the client left: %v, want errBadAnswer", err)
	}

	broken := errors.New("stream closed")
	for fail := range 2 {
		var seen []string
		_, _, err := rig.b.ask(context.Background(), sess, testCaller, []era.InputRequest{elicitReq, samplingReq}, roundLimits{}, func(msg []byte) error {
			var m struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(msg, &m)
			seen = append(seen, m.ID)
			if len(seen) > fail {
				return broken
			}
			return nil
		})
		if !errors.Is(err, broken) {
			t.Fatalf("emit failing on request %d: ask = %v", fail, err)
		}
		rig.assertIdle(t)
		for i, id := range seen {
			res := acceptName
			if i == 1 {
				res = samplingRes
			}
			if err := rig.b.deliver(context.Background(), sess, testCaller, answer(id, res)); !errors.Is(err, errBadAnswer) {
				t.Errorf("answer to a request of a failed round: %v", err)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := rig.b.ask(ctx, sess, testCaller, []era.InputRequest{elicitReq}, roundLimits{}, func([]byte) error {
		t.Error("wrote a request for a context that had already ended")
		return errors.New("written")
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ask with an ended context = %v", err)
	}
	if got := rig.outcome(t, metrics.AskKindSampling, metrics.AskLost); got != 3 {
		t.Errorf("sampling lost = %v, want 3", got)
	}
	rig.assertIdle(t)
	// ask starts no goroutine of its own: once the test's own have ended, none is left.
	mcptest.WaitFor(t, "no goroutine left", func() bool { return runtime.NumGoroutine() <= goroutines })
}

// TestAsksCapabilityGating: a round with one entry the client did not declare writes
// nothing, registers nothing and returns *noCapabilityError naming the capability.
func TestAsksCapabilityGating(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{}, nil, nil)
	cases := []struct {
		caps string
		reqs []era.InputRequest
		want string
	}{
		{`{"elicitation":{"form":{}}}`, []era.InputRequest{elicitReq, samplingReq}, "sampling"},
		{`{}`, []era.InputRequest{confirmReq}, "elicitation.form"},
		{`{"sampling":{},"elicitation":{"form":{}}}`, []era.InputRequest{elicitReq, rootsReq}, "roots"},
	}
	for _, c := range cases {
		out, _, err := rig.b.ask(context.Background(), testSession(1, "p1", c.caps), testCaller, c.reqs, roundLimits{}, func([]byte) error {
			t.Errorf("caps %s: a request was written", c.caps)
			return errors.New("written")
		})
		var nc *noCapabilityError
		if !errors.As(err, &nc) || nc.Capability != c.want || out != nil {
			t.Errorf("caps %s: ask = %s, %v; want noCapabilityError{%s}", c.caps, out, err, c.want)
		}
		rig.assertIdle(t)
	}
	if got := rig.outcome(t, metrics.AskKindConfirm, metrics.AskNoCapability); got != 1 {
		t.Errorf("confirm no_capability = %v, want 1", got)
	}
}

// TestAsksCancelLocal: notifications/cancelled cancels the request it names, in its session
// only, with the id compared as JSON (7 and "7" differ, "a" and "\u0061" do not); untrack
// removes the entry.
func TestAsksCancelLocal(t *testing.T) {
	rig := newAsksRig(t, asksTestRing(t), asksConfig{}, nil, nil)
	sess := testSession(1, "p1", allCaps)
	bg := context.Background()
	num, cancelNum := context.WithCancel(bg)
	str, cancelStr := context.WithCancel(bg)
	defer cancelNum()
	defer cancelStr()
	untrackNum := rig.b.track(sess, json.RawMessage(`7`), cancelNum)
	untrackStr := rig.b.track(sess, json.RawMessage(`"a"`), cancelStr)

	rig.b.cancel(bg, testSession(2, "p1", allCaps), testCaller, json.RawMessage(`7`)) // another session
	rig.b.cancel(bg, testSession(1, "p2", allCaps), testCaller, json.RawMessage(`7`)) // another principal
	rig.b.cancel(bg, sess, testCaller, json.RawMessage(`"7"`))                        // another id
	if num.Err() != nil || str.Err() != nil {
		t.Fatal("a cancellation for another request cancelled one")
	}
	rig.b.cancel(bg, sess, testCaller, json.RawMessage(`7`))
	if num.Err() == nil {
		t.Fatal("7 not cancelled")
	}
	rig.b.cancel(bg, sess, testCaller, json.RawMessage(`"\u0061"`))
	if str.Err() == nil {
		t.Fatal(`"a" not cancelled by "\u0061"`)
	}
	untrackNum()
	untrackNum() // idempotent
	untrackStr()
	rig.assertIdle(t)
}

// countingNotices counts the publishes of a replica.
type countingNotices struct {
	store.Notices
	published atomic.Int64
	largest   atomic.Int64 // the most bytes one notice carried
	// answers holds the correlation id of every answer forwarded: a forward sends one answer
	// again, under the same one, until it hears back.
	answers sync.Map
}

// Publish counts and publishes.
func (c *countingNotices) Publish(ctx context.Context, topic string, msg []byte) error {
	c.published.Add(1)
	var n replyNotice
	if json.Unmarshal(msg, &n) == nil && n.Type == noticeAnswer {
		c.answers.Store(n.Corr, true)
	}
	for n := int64(len(msg)); ; {
		if old := c.largest.Load(); n <= old || c.largest.CompareAndSwap(old, n) {
			break
		}
	}
	return c.Notices.Publish(ctx, topic, msg)
}

// startRedisAsks starts n asks components sharing srv and clock, each with its own store (its own
// connections, like separate replicas), subscribed until the test ends.
func startRedisAsks(t *testing.T, srv *testredis.Server, clock *mcptest.Clock, n int) []*asksRig {
	t.Helper()
	ring := asksTestRing(t)
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: srv.Password(), DisableIdentity: true})
	t.Cleanup(func() { _ = raw.Close() })
	rigs := make([]*asksRig, n)
	for i := range rigs {
		st, err := store.NewRedis(store.RedisConfig{URL: srv.URL(), KeyPrefix: "bt:"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		rigs[i] = newAsksRig(t, ring, asksConfig{}, &countingNotices{Notices: st}, clock)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		rigs[i].stop = cancel
		rigs[i].b.start(ctx)
		waitSubscribed(t, raw, "bt:notice:"+rigs[i].b.topic, 1)
	}
	waitSubscribed(t, raw, "bt:notice:"+cancelTopic, int64(n))
	return rigs
}

// waitSubscribed polls PUBSUB NUMSUB until channel has n subscribers.
func waitSubscribed(t *testing.T, raw *redis.Client, channel string, n int64) {
	t.Helper()
	mcptest.WaitFor(t, channel+" subscribed", func() bool {
		got, err := raw.PubSubNumSub(context.Background(), channel).Result()
		return err == nil && got[channel] == n
	})
}

// TestAsksCrossReplica: two replicas share a real Redis. An answer POSTed to replica B for a
// request replica A sent wakes A's round; B refuses a replay (A says it no longer waits) and
// an answer for a round that has ended; the ids' checks run on B before anything is published.
func TestAsksCrossReplica(t *testing.T) {
	srv := testredis.Start(t)
	clock := mcptest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	rigs := startRedisAsks(t, srv, clock, 2)
	a, b := rigs[0], rigs[1]
	published := &b.b.notices.(*countingNotices).published
	sess := testSession(1, "p1", allCaps)
	ctx := context.Background()

	p := startAsk(t, a.b, sess, elicitReq, samplingReq)
	ids := p.ids(t, 2)
	if err := b.b.deliver(ctx, testSession(2, "p1", allCaps), testCaller, answer(ids[0], acceptName)); !errors.Is(err, errBadAnswer) {
		t.Fatalf("answer from another session through B: %v", err)
	}
	if err := b.b.deliver(ctx, sess, testCaller, answer("g1.v1.b1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", acceptName)); !errors.Is(err, errBadAnswer) {
		t.Fatalf("forged answer through B: %v", err)
	}
	if n := published.Load(); n != 0 {
		t.Fatalf("B published %d notices for answers it should have refused itself", n)
	}
	if err := b.b.deliver(ctx, sess, testCaller, answer(ids[0], acceptName)); err != nil {
		t.Fatalf("answer through B: %v", err)
	}
	if err := b.b.deliver(ctx, sess, testCaller, answer(ids[0], acceptName)); !errors.Is(err, errBadAnswer) {
		t.Fatalf("replay through B: %v, want errBadAnswer", err)
	}
	var bad *badResultError
	if err := b.b.deliver(ctx, sess, testCaller, answer(ids[1], `"not an object"`)); !errors.As(err, &bad) || bad.Method != "sampling/createMessage" {
		t.Fatalf("malformed result through B: %v, want a bad result of sampling/createMessage", err)
	}
	p.stillWaiting(t)
	if err := a.b.deliver(ctx, sess, testCaller, answer(ids[1], samplingRes)); err != nil {
		t.Fatalf("answer through A: %v", err)
	}
	r := p.result(t)
	if want := `{"name":` + acceptName + `,"draft":` + samplingRes + `}`; r.err != nil || string(r.out) != want {
		t.Fatalf("ask = %s, %v; want %s", r.out, r.err, want)
	}
	if got := a.outcome(t, metrics.AskKindElicitation, metrics.AskCrossReplica); got != 1 {
		t.Errorf("elicitation cross_replica on A = %v, want 1", got)
	}
	if got := a.outcome(t, metrics.AskKindSampling, metrics.AskAnswered); got != 1 {
		t.Errorf("sampling answered on A = %v, want 1", got)
	}
	if err := b.b.deliver(ctx, sess, testCaller, answer(ids[1], samplingRes)); !errors.Is(err, errBadAnswer) {
		t.Fatalf("answer after the round ended, through B: %v, want errBadAnswer", err)
	}
	// Past the deadline sealed in the id, B refuses without asking A.
	before := published.Load()
	clock.Advance(defaultAskTimeout)
	if err := b.b.deliver(ctx, sess, testCaller, answer(ids[1], samplingRes)); !errors.Is(err, errBadAnswer) {
		t.Fatalf("expired answer through B: %v, want errBadAnswer", err)
	}
	if n := published.Load() - before; n != 0 {
		t.Fatalf("B published %d notices for an expired answer", n)
	}
	a.assertIdle(t)
	b.assertIdle(t)
}

// TestAsksAskingReplicaGone: when the replica that asked is gone (its subscription ended),
// the replica that received the answer hears nothing back and refuses the answer, counting it
// as lost.
func TestAsksAskingReplicaGone(t *testing.T) {
	srv := testredis.Start(t)
	ring := asksTestRing(t)
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: srv.Password(), DisableIdentity: true})
	t.Cleanup(func() { _ = raw.Close() })
	newStore := func() *store.Redis {
		st, err := store.NewRedis(store.RedisConfig{URL: srv.URL(), KeyPrefix: "bt:"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	a := newAsksRig(t, ring, asksConfig{}, newStore(), nil)
	b := newAsksRig(t, ring, asksConfig{}, newStore(), nil)
	// The publish itself is bounded by this wait too, so it leaves a loaded machine's Redis
	// time to take it: what the test waits out is the acknowledgement nobody sends.
	b.b.forwardTimeout = 2 * time.Second
	actx, stopA := context.WithCancel(context.Background())
	a.b.start(actx)
	bctx, stopB := context.WithCancel(context.Background())
	defer stopB()
	b.b.start(bctx)
	waitSubscribed(t, raw, "bt:notice:"+b.b.topic, 1)

	sess := testSession(1, "p1", allCaps)
	p := startAsk(t, a.b, sess, elicitReq)
	id := p.ids(t, 1)[0]
	stopA()
	waitSubscribed(t, raw, "bt:notice:"+a.b.topic, 0)
	if err := b.b.deliver(context.Background(), sess, testCaller, answer(id, acceptName)); !errors.Is(err, errBadAnswer) {
		t.Fatalf("answer for a gone replica: %v, want errBadAnswer", err)
	}
	if got := b.outcome(t, metrics.AskKindElicitation, metrics.AskLost); got != 1 {
		t.Errorf("elicitation lost on B = %v, want 1", got)
	}
	p.stillWaiting(t)
	p.stop()
	p.result(t)
	a.assertIdle(t)
	b.assertIdle(t)
}

// TestAsksCancelCrossReplica: notifications/cancelled POSTed to replica B cancels the request
// running on replica A, and only that one.
func TestAsksCancelCrossReplica(t *testing.T) {
	srv := testredis.Start(t)
	rigs := startRedisAsks(t, srv, nil, 2)
	a, b := rigs[0], rigs[1]
	sess := testSession(1, "p1", allCaps)
	run, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	other, cancelOther := context.WithCancel(context.Background())
	defer cancelOther()
	untrack := a.b.track(sess, json.RawMessage(`"call-1"`), cancelRun)
	untrackOther := a.b.track(testSession(2, "p1", allCaps), json.RawMessage(`"call-1"`), cancelOther)

	b.b.cancel(context.Background(), sess, testCaller, json.RawMessage(`"call-1"`))
	select {
	case <-run.Done():
	case <-time.After(asksHang): // fail-safe
		t.Fatal("the request on A was not cancelled")
	}
	if other.Err() != nil {
		t.Fatal("another session's request with the same id was cancelled")
	}
	untrack()
	untrackOther()
	a.assertIdle(t)
	b.assertIdle(t)
}

// TestAsksCancelPublishBounded: a notifications/cancelled for a request running on no replica
// the one it reached knows of goes out as a notice, and a Redis slow to take that publish holds
// the notification's POST (whose context has no deadline) no longer than the asks' forward
// timeout. Before, it held it for as long as Redis did.
func TestAsksCancelPublishBounded(t *testing.T) {
	srv := testredis.Start(t)
	b := startRedisAsks(t, srv, nil, 1)[0]
	stalling := &stallingNotices{Notices: b.b.notices, topic: cancelTopic, stalled: make(chan struct{}, 1)}
	b.b.notices = stalling
	b.b.forwardTimeout = 100 * time.Millisecond
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.b.cancel(context.Background(), testSession(1, "p1", allCaps), testCaller, json.RawMessage(`"call-1"`))
	}()
	select {
	case <-stalling.stalled:
	case <-time.After(asksHang): // fail-safe
		t.Fatal("the cancellation was not published")
	}
	select {
	case <-done:
	case <-time.After(asksHang): // fail-safe
		t.Fatal("the cancellation waited on Redis without a bound")
	}
}

// TestAsksCancelLongID: a request whose id is a long string (up to server.maxJSONTokenBytes)
// is cancelled across replicas by a notice of a fixed, small size, and the replica running it
// keeps a digest of the id, not the id. Before, the id itself went to every replica in each
// notifications/cancelled (a megabyte per cancellation, decoded by each) and was copied into the
// map of running requests.
func TestAsksCancelLongID(t *testing.T) {
	srv := testredis.Start(t)
	rigs := startRedisAsks(t, srv, nil, 2)
	a, b := rigs[0], rigs[1]
	sess := testSession(1, "p1", allCaps)
	id := json.RawMessage(`"` + strings.Repeat("i", 256<<10) + `"`)
	run, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	untrack := a.b.track(sess, id, cancelRun)
	a.b.mu.Lock()
	for k := range a.b.running {
		if len(k.id) > 2*sha256.Size {
			t.Errorf("the running request is kept under %d bytes of id", len(k.id))
		}
	}
	a.b.mu.Unlock()
	b.b.cancel(context.Background(), sess, testCaller, id)
	select {
	case <-run.Done():
	case <-time.After(asksHang): // fail-safe
		t.Fatal("the request on A was not cancelled")
	}
	if n := b.b.notices.(*countingNotices).largest.Load(); n > 512 {
		t.Errorf("the cancellation notice carried %d bytes", n)
	}
	untrack()
	a.assertIdle(t)
}

// BenchmarkAsksPending measures what 1,000 requests waiting for a legacy client's answer
// cost a replica: B/pending counts the asks' heap and the stack of the goroutine waiting in
// ask (in the gateway that goroutine is the client's HTTP handler, which exists anyway);
// heap-B/pending counts the asks' own state only.
func BenchmarkAsksPending(b *testing.B) {
	const n = 1000
	// One caller holds every ask: its own bound is raised with the replica's.
	rig := newAsksRig(b, asksTestRing(b), asksConfig{MaxPending: n, MaxPendingPerCaller: n}, nil, nil)
	sessions := make([]*legacysession.Session, n)
	for i := range sessions {
		sessions[i] = testSession(byte(i), "p1", allCaps)
		sessions[i].Nonce[1], sessions[i].Nonce[2] = byte(i>>8), 1
	}
	reqs := []era.InputRequest{elicitReq}
	var heap, total float64
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var written, ended sync.WaitGroup
		written.Add(n)
		ended.Add(n)
		for i := range n {
			go func() {
				defer ended.Done()
				var wrote atomic.Bool
				_, _, _ = rig.b.ask(ctx, sessions[i], testCaller, reqs, roundLimits{}, func([]byte) error {
					wrote.Store(true)
					written.Done()
					return nil
				})
				if !wrote.Load() { // refused before it was written: counted below, not waited for
					written.Done()
				}
			}()
		}
		written.Wait()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if w := rig.waiting(); w != n {
			b.Fatalf("%d waiting, want %d", w, n)
		}
		heap = float64(after.HeapAlloc-before.HeapAlloc) / n
		total = heap + float64(after.StackInuse-before.StackInuse)/n
		cancel()
		ended.Wait()
	}
	b.ReportMetric(total, "B/pending")
	b.ReportMetric(heap, "heap-B/pending")
	rig.assertIdle(b)
}

// TestAsksCancelResendBounded: a cancellation no replica acknowledges (the request it names
// runs nowhere) is sent again for a while, but one caller keeps at most MaxForwardsPerCaller of
// them going at once, whatever it sends; past that a cancellation goes once, and another
// caller's are not held up by it. The resends end with the forward timeout.
func TestAsksCancelResendBounded(t *testing.T) {
	srv := testredis.Start(t)
	b := startRedisAsks(t, srv, nil, 1)[0]
	b.b.forwardTimeout = time.Hour // the resends outlive the sends below
	sess := testSession(1, "p1", allCaps)
	limit := b.b.cfg.MaxForwardsPerCaller
	for i := range 3 * limit {
		b.b.cancel(context.Background(), sess, testCaller, json.RawMessage(fmt.Sprint(i)))
	}
	b.b.cancel(context.Background(), sess, "another caller", json.RawMessage(`"x"`))
	b.b.mu.Lock()
	mine, theirs, all := b.b.cancelsOf[testCaller], b.b.cancelsOf["another caller"], len(b.b.cancels)
	b.b.mu.Unlock()
	if mine != limit || theirs != 1 || all != limit+1 {
		t.Fatalf("cancellations sent again: %d of the caller's (want %d), %d of another's (want 1), %d in all",
			mine, limit, theirs, all)
	}
}
