package pre2026

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/sharelru"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/mrtr"
)

// Defaults of asksConfig.
const (
	defaultAskTimeout           = 10 * time.Minute
	defaultMaxPendingPerSession = 8
	defaultMaxPendingPerCaller  = 32
	defaultMaxPending           = 10000
	defaultMaxForwardsPerCaller = 4
	// defaultForwardTimeout bounds how long a replica that received an answer for another
	// replica waits for that replica to say whether it took it. Redis answers in well under a
	// millisecond; only a replica that is gone lets it run out.
	defaultForwardTimeout = 5 * time.Second
	// goneFor is how long a replica whose acknowledgement never came is taken for gone:
	// answers for it are refused at once rather than each waiting defaultForwardTimeout.
	goneFor = time.Minute
	// maxGone and maxUsed bound the replicas taken for gone and the answer ids known used.
	// One caller's ids known used are at most an eighth of maxUsed (sharelru.CallerShareDivisor):
	// past it, that caller's id recorded longest ago is forgotten, never another caller's (a
	// replay of a forgotten id crosses Redis, and is still refused by the asking replica).
	maxGone = 1024
	maxUsed = 100000
	// maxReplyWorkers bounds the forwarded answers a replica checks and acknowledges at once.
	maxReplyWorkers = 64
	// resendEvery is how often a forwarded answer goes again while no acknowledgement came
	// back (forward): a subscription dropped and made again takes about a tenth of a second.
	resendEvery = 250 * time.Millisecond
)

// Errors of the asks. The edge maps them to what the client sees.
var (
	// errBadAnswer is a client's answer that no replica is waiting for: a forged, tampered,
	// expired, foreign-session or already used id, or one whose asking replica is gone. The
	// edge answers 400 and nothing else happens.
	errBadAnswer = errors.New("asks: no request is waiting for this answer")
	// errAskTimeout is a round the client did not answer within asksConfig.Timeout.
	errAskTimeout = errors.New("asks: no answer from the client in time")
	// errSessionExpired is a round its session's expiry ended: the client's answers would be
	// refused (404) from then on.
	errSessionExpired = errors.New("asks: the client's session expired before it answered")
	// errAsksBusy is a round refused because its session, its caller or this replica already
	// waits for as many answers as it may, or an answer refused because its caller has as many
	// on their way to other replicas as it may.
	errAsksBusy = errors.New("asks: too many requests waiting for client answers")
	// errAsksUnavailable is an answer that could not be handed to the other replicas (Redis
	// refused the publish). Unlike errBadAnswer it is not the client's fault.
	errAsksUnavailable = errors.New("asks: cannot reach the other replicas")
)

// noCapabilityError is a round that needs a capability the client did not declare at
// initialize. Nothing was written to the client.
type noCapabilityError struct {
	// Capability is what was missing: "elicitation.form", "elicitation.url", "sampling" or
	// "roots" (era.InputRequest.Capability).
	Capability string
}

// Error names the capability; the edge turns it into the tool error the client sees.
func (e *noCapabilityError) Error() string {
	return "asks: the client did not declare the " + e.Capability + " capability"
}

// answersTooLargeError is a round whose answers together make an inputResponses larger than
// one request may carry. The round ends: they would not go on to the backend.
type answersTooLargeError struct {
	// Max is the bound, in bytes.
	Max int64
}

// Error names the bound.
func (e *answersTooLargeError) Error() string {
	return "the client's answers to this round exceed " + strconv.FormatInt(e.Max, 10) + " bytes"
}

// callerAnswersError is a round whose answers would take the answers its caller's rounds hold
// on this replica past the caller's share (roundLimits.CallerBytes). The round ends.
type callerAnswersError struct {
	// Max is the share, in bytes.
	Max int64
}

// Error names the share.
func (e *callerAnswersError) Error() string {
	return "the answers this caller's calls hold while they wait for more exceed " +
		strconv.FormatInt(e.Max, 10) + " bytes on this replica"
}

// errAnswersBudget is a round whose answer did not fit the replica's budget of request bytes in
// flight. The round ends: the answer cannot be held.
var errAnswersBudget = errors.New("asks: the gateway holds as many request bytes as it may; try again shortly")

// badResultError is a client's answer, to a request of its session not yet answered, whose
// result that request cannot take: an elicitation result without an action of accept,
// decline or cancel, a sampling result without its role, content and model, roots that are not
// an array. It is refused on whichever replica it reaches, before it is handed on, and nothing
// waiting is touched: the client may answer again.
type badResultError struct {
	// Method is the method of the request the answer is for.
	Method string
}

// Error says what the answer needs, in the terms of the client's own message.
func (e *badResultError) Error() string {
	need := `an "action" of "accept", "decline" or "cancel"`
	switch e.Method {
	case era.MethodSamplingCreate:
		need = `a string "role", a "content" and a string "model"`
	case era.MethodRootsList:
		need = `a "roots" array`
	}
	return "this answer to " + e.Method + " was not taken: its result needs " + need + "; answer again"
}

// clientAnswerError is a client that answered one of the gateway's requests with a JSON-RPC
// error instead of a result. The round ends: an error has no place in inputResponses.
type clientAnswerError struct {
	// Key is the inputRequests key of the request the client refused.
	Key string
	// Method is that request's method.
	Method string
	// Err is the client's error, as it sent it.
	Err *jsonrpc.Error
}

// Error names the method and the client's message.
func (e *clientAnswerError) Error() string {
	return "asks: the client answered " + e.Method + " with an error: " + e.Err.Message
}

// asksConfig bounds the asks. Zero values take the defaults.
type asksConfig struct {
	Timeout              time.Duration // wait for one round's answers (default 10m)
	MaxPendingPerSession int           // default 8
	MaxPendingPerCaller  int           // all sessions of one caller on this replica; default 32
	MaxPending           int           // all callers on this replica; default 10000
	MaxForwardsPerCaller int           // one caller's answers on their way to other replicas; default 4
}

// withDefaults fills the zero fields.
func (c asksConfig) withDefaults() asksConfig {
	if c.Timeout <= 0 {
		c.Timeout = defaultAskTimeout
	}
	if c.MaxPendingPerSession <= 0 {
		c.MaxPendingPerSession = defaultMaxPendingPerSession
	}
	if c.MaxPendingPerCaller <= 0 {
		c.MaxPendingPerCaller = defaultMaxPendingPerCaller
	}
	if c.MaxPending <= 0 {
		c.MaxPending = defaultMaxPending
	}
	if c.MaxForwardsPerCaller <= 0 {
		c.MaxForwardsPerCaller = defaultMaxForwardsPerCaller
	}
	return c
}

// asks carries the gateway's requests to pre-2026 clients (elicitation, sampling, roots), their
// answers, and the clients' cancellations.
//
// A pre-2026 client cannot answer an input_required result: it expects the server to send it
// real requests while its own call is running. The replica holding the client's POST stream
// writes them (ask) and waits; the client POSTs each answer separately, to any replica, which
// hands it over (deliver): to the local waiter map when it is the asking replica, else through a
// Redis notice on the asking replica's own topic, which says back whether it took the answer.
// Answer ids are sealed, so they cannot be forged, name their replica, session and deadline, and
// are single use: the waiter they name is removed by the first answer it accepts, and every
// replica learns (a notice) that the id is used, so a replay is refused wherever it lands before
// Redis is touched.
//
// Every kind of state a client makes it keep is bounded per caller (the waiters, the answers
// on their way to another replica), besides the per-session and per-replica bounds; and the
// request that waits holds its caller's in-flight slot for as long as it waits.
type asks struct {
	cfg    asksConfig
	sealer *seal.Sealer
	// forwarded seals an answer handed to another replica (replicas.go).
	forwarded *seal.Sealer
	notices   store.Notices
	m         *metrics.Recorder
	now       func() time.Time

	// replica names this replica in the answer ids it mints; it is random per process, so a
	// restarted replica never takes answers meant for its previous life.
	replica [16]byte
	// topic is where the other replicas send this one the answers it waits for, and the
	// acknowledgements of the answers it forwarded.
	topic string
	// forwardTimeout bounds the wait for another replica's acknowledgement.
	forwardTimeout time.Duration
	// replyWorkers holds a token per forwarded answer being checked and acknowledged
	// (onReply).
	replyWorkers chan struct{}

	mu sync.Mutex
	// waiters holds every request sent and not yet answered, by its random r.
	waiters map[[16]byte]*waiter
	// perSession and perCaller count the waiters of each session binding and of each caller;
	// an absent key is zero.
	perSession map[string]int
	perCaller  map[string]int
	// heldOf counts the bytes of the answers each caller's rounds hold (roundLimits).
	heldOf map[string]int64
	// forwards holds the answers handed to another replica and not yet acknowledged;
	// forwardsOf counts them by caller.
	forwards   map[[16]byte]chan bool
	forwardsOf map[string]int
	// forwarding holds the r of every answer on its way to another replica: one answer id
	// is forwarded once at a time.
	forwarding map[[16]byte]bool
	// cancels holds the cancellations being sent to the other replicas again until one says
	// it cancelled the request (cancel.go); cancelsOf counts them by caller; cancelling
	// holds the requests they name, true once the first is published, so that a cancellation
	// sent again while the first is still on its way adds nothing.
	cancels    map[[16]byte]chan bool
	cancelsOf  map[string]int
	cancelling map[runKey]bool
	// gone holds the replicas whose acknowledgement never came, until when they are taken for
	// gone.
	gone map[[16]byte]time.Time
	// used holds the answer ids known used, by r, each with the correlation id of the forward
	// that brought the answer that used it (zero when none, or learnt from another replica),
	// each counted against its caller's share (markUsedLocked).
	used *sharelru.Cache[[16]byte, [16]byte]
	// running holds the pre-2026 requests in progress on this replica, for cancellation.
	running map[runKey][]*runEntry
	// observe, when set, is told the method of every request written to a client (tests).
	observe func(method string)
}

// waiter is one request sent to a client and not yet answered.
type waiter struct {
	binding  string
	caller   string
	deadline time.Time
	req      era.InputRequest // a copy: the caller's slice may change once ask returns
	idx      int
	// answers is the channel of the round the request belongs to, with room for every answer
	// of the round, so handing one over never blocks.
	answers chan<- askAnswer
}

// askAnswer is an accepted answer on its way to the round that waits for it.
type askAnswer struct {
	idx      int
	value    json.RawMessage // the inputResponses value
	rpcErr   *jsonrpc.Error  // the client answered with an error instead
	remote   bool            // it came through another replica
	declined bool
}

// newAsks builds the asks. Answer ids are sealed for purposeAnswerID, so they never open as
// anything else; notices nil means a single replica.
func newAsks(cfg asksConfig, ring *seal.KeyRing, notices store.Notices, m *metrics.Recorder, now func() time.Time) *asks {
	if now == nil {
		now = time.Now
	}
	b := &asks{
		cfg:            cfg.withDefaults(),
		sealer:         ring.Sealer(purposeAnswerID),
		forwarded:      ring.SealerUpTo(purposeForwardedAnswer, maxForwardedAnswerBytes),
		notices:        notices,
		m:              m,
		now:            now,
		replica:        random16(),
		forwardTimeout: defaultForwardTimeout,
		replyWorkers:   make(chan struct{}, maxReplyWorkers),
		waiters:        map[[16]byte]*waiter{},
		perSession:     map[string]int{},
		perCaller:      map[string]int{},
		heldOf:         map[string]int64{},
		forwards:       map[[16]byte]chan bool{},
		forwardsOf:     map[string]int{},
		forwarding:     map[[16]byte]bool{},
		cancels:        map[[16]byte]chan bool{},
		cancelsOf:      map[string]int{},
		cancelling:     map[runKey]bool{},
		gone:           map[[16]byte]time.Time{},
		used: sharelru.New[[16]byte, [16]byte](sharelru.Config{MaxEntries: maxUsed,
			ShareDivisor: sharelru.CallerShareDivisor}),
		running: map[runKey][]*runEntry{},
	}
	b.topic = replyTopic(b.replica)
	return b
}

// start subscribes to the asks' notice topics (answers and acknowledgements for this replica;
// cancellations and used ids for every replica) until ctx ends. It returns at once.
func (b *asks) start(ctx context.Context) {
	if b.notices == nil {
		return
	}
	b.notices.Subscribe(ctx, b.topic, func(msg []byte) { b.onReply(ctx, msg) })
	b.notices.Subscribe(ctx, cancelTopic, func(msg []byte) { b.onCancel(ctx, msg) })
	b.notices.Subscribe(ctx, usedTopic, b.onUsed)
}

// answerBudget is the replica's budget of request bytes in flight (mcphttp.Incoming), which
// the answers a round holds are charged to.
type answerBudget interface {
	TakeBodyBytes(n int64) bool
	ReturnBodyBytes(n int64)
}

// roundLimits bound the answers one round holds. The answers arrive in separate POSTs, each
// within server.maxBodyBytes and charged to the replica's budget of request bytes in flight
// only while it is received; the round holds them until it is complete and then sends them on
// in one request. Zero values bound nothing (tests of other behaviour).
type roundLimits struct {
	// MaxBytes bounds the inputResponses object a round's answers make: what one request may
	// carry (server.maxBodyBytes), as a 2026-07-28 client's inputResponses are, by being in one
	// body. Past it the round ends with *answersTooLargeError.
	MaxBytes int64
	// CallerBytes bounds the answers every round of the caller holds at once on this replica.
	// Past it the round ends with *callerAnswersError.
	CallerBytes int64
	// Budget is charged every answer held, until the round's answers are let go; past it the
	// round ends with errAnswersBudget. Nil charges nothing.
	Budget answerBudget
}

// heldAnswers are the answers a round holds, charged to its caller's share and to the
// replica's budget; release gives them back, once.
type heldAnswers struct {
	b      *asks
	caller string
	lim    roundLimits
	n      int64
}

// take charges n more bytes of answers.
func (h *heldAnswers) take(n int64) error {
	if h == nil {
		return nil
	}
	b := h.b
	b.mu.Lock()
	if h.lim.CallerBytes > 0 && b.heldOf[h.caller]+n > h.lim.CallerBytes {
		b.mu.Unlock()
		return &callerAnswersError{Max: h.lim.CallerBytes}
	}
	b.heldOf[h.caller] += n
	b.mu.Unlock()
	if h.lim.Budget != nil && !h.lim.Budget.TakeBodyBytes(n) {
		b.mu.Lock()
		decrement64(b.heldOf, h.caller, n)
		b.mu.Unlock()
		return errAnswersBudget
	}
	h.n += n
	return nil
}

// release gives back every byte charged; a second call gives back nothing.
func (h *heldAnswers) release() {
	if h == nil || h.n == 0 {
		return
	}
	n := h.n
	h.n = 0
	if h.lim.Budget != nil {
		h.lim.Budget.ReturnBodyBytes(n)
	}
	h.b.mu.Lock()
	decrement64(h.b.heldOf, h.caller, n)
	h.b.mu.Unlock()
}

// ask writes one JSON-RPC request per entry on the client's stream through emit, waits for
// every answer, and returns the inputResponses object (keys as given) and the function that
// lets go of the answers once the request that carries them on has ended: until then they stay
// charged to the caller's share and the replica's budget (lim). Entries whose capability the
// session does not declare are not sent: ask returns *noCapabilityError at once, before writing
// anything. A timeout returns errAskTimeout, the end of ctx ctx.Err(), an error answer
// *clientAnswerError, answers beyond lim *answersTooLargeError, *callerAnswersError or
// errAnswersBudget; every request still waiting is forgotten, and every answer let go, before
// ask returns an error. caller is the session's caller (issuer and subject), whose waiters and
// answers are bounded together.
func (b *asks) ask(ctx context.Context, sess *legacysession.Session, caller string, reqs []era.InputRequest, lim roundLimits,
	emit func(msg []byte) error) (json.RawMessage, func(), error) {
	out, held, err := b.askHeld(ctx, sess, caller, reqs, lim, emit)
	if err != nil {
		return nil, nil, err
	}
	return out, held.release, nil
}

// askHeld is ask returning what the answers are charged as, so that a copy the caller makes of
// them (the params that carry them on) can be charged with them (heldAnswers.take).
func (b *asks) askHeld(ctx context.Context, sess *legacysession.Session, caller string, reqs []era.InputRequest, lim roundLimits,
	emit func(msg []byte) error) (_ json.RawMessage, _ *heldAnswers, err error) {
	if err := b.checkCapabilities(sess, reqs); err != nil {
		return nil, nil, err
	}
	held := &heldAnswers{b: b, caller: caller, lim: lim}
	if len(reqs) == 0 {
		return json.RawMessage(`{}`), held, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	r, err := b.register(sess, caller, reqs)
	if err != nil {
		return nil, nil, err
	}
	failure := metrics.AskLost
	defer func() { b.finish(r, failure) }()
	defer func() {
		if err != nil {
			held.release()
		}
	}()
	if err := b.emitAll(r, reqs, emit); err != nil {
		return nil, nil, err
	}
	reqs = withoutParams(reqs)
	timedOut, err := b.awaitAnswers(ctx, r, reqs, held)
	if timedOut {
		failure = metrics.AskTimeout
	}
	if err != nil {
		return nil, nil, err
	}
	return inputResponses(reqs, r.values), held, nil
}

// checkCapabilities refuses a round with an entry whose capability the session does not
// declare, before anything is written, and counts it.
func (b *asks) checkCapabilities(sess *legacysession.Session, reqs []era.InputRequest) error {
	for i := range reqs {
		if !era.Declares(sess.Caps, reqs[i].Capability) {
			b.m.LegacyAsk(kindOf(&reqs[i]).label(), metrics.AskNoCapability)
			return &noCapabilityError{Capability: reqs[i].Capability}
		}
	}
	return nil
}

// askWriteError is a request to the client (Method, elicitation/create say) that could not be
// written to its stream, for Err.
type askWriteError struct {
	Method string
	Err    error
}

func (e *askWriteError) Error() string {
	return "asks: writing " + e.Method + " to the client: " + e.Err.Error()
}

func (e *askWriteError) Unwrap() error { return e.Err }

// emitAll writes r's requests to the client through emit, then lets go of them.
func (b *asks) emitAll(r *round, reqs []era.InputRequest, emit func(msg []byte) error) error {
	for i := range reqs {
		if b.observe != nil {
			b.observe(reqs[i].Method)
		}
		if err := emit(r.messages[i]); err != nil {
			return &askWriteError{Method: reqs[i].Method, Err: err}
		}
	}
	r.messages = nil // written; nothing needs them any more
	return nil
}

// awaitAnswers waits for an answer to each of reqs, keeping each in r.values charged to held,
// until the round's wait, ctx or an answer ends it; timedOut says the wait did.
func (b *asks) awaitAnswers(ctx context.Context, r *round, reqs []era.InputRequest, held *heldAnswers) (timedOut bool, err error) {
	timer := time.NewTimer(r.wait)
	defer timer.Stop()
	size := int64(len("{}"))
	for remaining := len(reqs); remaining > 0; remaining-- {
		select {
		case a := <-r.answers:
			if err := b.takeAnswer(r, reqs, a, &size, held); err != nil {
				return false, err
			}
		case <-timer.C:
			if r.sessionEnds {
				return true, errSessionExpired
			}
			return true, errAskTimeout
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	return false, nil
}

// takeAnswer counts answer a, refuses an error answer or one that makes the round's answers
// (*size, as inputResponses lays them out) or the caller's share too large, and keeps its value.
func (b *asks) takeAnswer(r *round, reqs []era.InputRequest, a askAnswer, size *int64, held *heldAnswers) error {
	r.done[a.idx] = true
	b.m.LegacyAsk(r.kinds[a.idx].label(), a.outcome())
	if a.rpcErr != nil {
		return &clientAnswerError{Key: reqs[a.idx].Key, Method: reqs[a.idx].Method, Err: a.rpcErr}
	}
	// As inputResponses lays it out: the quoted key, a colon, the value, a comma.
	if *size += int64(len(reqs[a.idx].Key) + len(a.value) + 4); held.lim.MaxBytes > 0 && *size > held.lim.MaxBytes {
		return &answersTooLargeError{Max: held.lim.MaxBytes}
	}
	// The answer's POST has given back what its body held: the round holds it now.
	if err := held.take(int64(len(a.value))); err != nil {
		return err
	}
	r.values[a.idx] = a.value
	return nil
}

// withoutParams is reqs without their params, for a round that has written its requests and
// waits: only the keys, methods and capabilities are needed to take the answers.
func withoutParams(reqs []era.InputRequest) []era.InputRequest {
	slim := make([]era.InputRequest, len(reqs))
	for i, r := range reqs {
		r.Params = nil
		slim[i] = r
	}
	return slim
}

// outcome is the metric outcome of an accepted answer.
func (a *askAnswer) outcome() string {
	switch {
	case a.declined || a.rpcErr != nil:
		return metrics.AskDeclined
	case a.remote:
		return metrics.AskCrossReplica
	default:
		return metrics.AskAnswered
	}
}

// round is one ask in progress: its waiters, the messages to write and what came back.
type round struct {
	binding  string
	caller   string
	rs       [][16]byte
	waiters  []*waiter
	kinds    []askKind
	messages [][]byte
	values   []json.RawMessage
	done     []bool
	answers  chan askAnswer
	// deadline ends the wait: legacy.askTimeout from now, or the session's expiry when that
	// comes first (sessionEnds).
	deadline    time.Time
	sessionEnds bool
	// wait is how long the round waits, measured once at registration (deadline less the
	// clock then): the wait is not lengthened or cut by the clock read later.
	wait time.Duration
}

// register admits a round under the per-session, per-caller and per-replica bounds, mints an
// answer id per request and registers its waiter, so that an answer finds it as soon as the
// request is written.
func (b *asks) register(sess *legacysession.Session, caller string, reqs []era.InputRequest) (*round, error) {
	n := len(reqs)
	r := &round{
		binding:  sessionBinding(sess),
		caller:   caller,
		rs:       make([][16]byte, n),
		waiters:  make([]*waiter, n),
		kinds:    make([]askKind, n),
		messages: make([][]byte, n),
		values:   make([]json.RawMessage, n),
		done:     make([]bool, n),
		answers:  make(chan askAnswer, n),
	}
	now := b.now()
	deadline := now.Add(b.cfg.Timeout)
	if !sess.Expires.IsZero() && sess.Expires.Before(deadline) {
		// From its session's expiry on, the client's answers are refused (404): a round
		// waiting on would hold its call for answers that cannot come.
		deadline, r.sessionEnds = sess.Expires, true
	}
	r.deadline, r.wait = deadline, deadline.Sub(now)
	for i := range reqs {
		r.rs[i] = random16()
		r.kinds[i] = kindOf(&reqs[i])
		id, err := b.mintAnswerID(&answerClaims{kind: r.kinds[i], r: r.rs[i], replica: b.replica,
			deadline: deadline, binding: r.binding})
		if err != nil {
			return nil, err
		}
		r.messages[i] = requestMessage(id, reqs[i].Method, reqs[i].Params)
		// The request without its params, which the message now carries: an answer is checked
		// against the method and capability only, and the params (up to a backend's response
		// limit) must not wait with it.
		req := reqs[i]
		req.Params = nil
		r.waiters[i] = &waiter{binding: r.binding, caller: caller, deadline: deadline, req: req, idx: i, answers: r.answers}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.perSession[r.binding]+n > b.cfg.MaxPendingPerSession || b.perCaller[caller]+n > b.cfg.MaxPendingPerCaller ||
		len(b.waiters)+n > b.cfg.MaxPending {
		return nil, errAsksBusy
	}
	for i, w := range r.waiters {
		b.waiters[r.rs[i]] = w
	}
	b.perSession[r.binding] += n
	b.perCaller[caller] += n
	b.m.LegacyAsksPending(n)
	return r, nil
}

// finish forgets the round's requests that are still waiting and counts every request the
// round did not use with failure.
func (b *asks) finish(r *round, failure string) {
	b.mu.Lock()
	removed := 0
	for i, w := range r.waiters {
		if b.waiters[r.rs[i]] == w {
			delete(b.waiters, r.rs[i])
			removed++
		}
	}
	b.releaseLocked(r.binding, r.caller, removed)
	b.mu.Unlock()
	for i, done := range r.done {
		if !done {
			b.m.LegacyAsk(r.kinds[i].label(), failure)
		}
	}
}

// releaseLocked takes n waiters of binding and caller off the counts. b.mu is held.
func (b *asks) releaseLocked(binding, caller string, n int) {
	if n == 0 {
		return
	}
	decrement(b.perSession, binding, n)
	decrement(b.perCaller, caller, n)
	b.m.LegacyAsksPending(-n)
}

// decrement takes n off counts[key], deleting the key at zero.
func decrement(counts map[string]int, key string, n int) {
	if left := counts[key] - n; left > 0 {
		counts[key] = left
	} else {
		delete(counts, key)
	}
}

// decrement64 takes n off counts[key], deleting the key at zero.
func decrement64(counts map[string]int64, key string, n int64) {
	if left := counts[key] - n; left > 0 {
		counts[key] = left
	} else {
		delete(counts, key)
	}
}

// requestMessage is the JSON-RPC request the client gets:
// {"jsonrpc":"2.0","id":"<answer id>","method":…,"params":…}.
func requestMessage(id, method string, params json.RawMessage) []byte {
	msg := make([]byte, 0, 64+len(id)+len(method)+len(params))
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = jsonrpc.AppendString(msg, id)
	msg = append(msg, `,"method":`...)
	msg = jsonrpc.AppendString(msg, method)
	if len(params) > 0 {
		msg = append(msg, `,"params":`...)
		msg = append(msg, params...)
	}
	return append(msg, '}')
}

// inputResponses builds the inputResponses object, keys in the order of reqs.
func inputResponses(reqs []era.InputRequest, values []json.RawMessage) json.RawMessage {
	size := 2
	for i := range reqs {
		size += len(reqs[i].Key) + len(values[i]) + 4
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	for i := range reqs {
		if i > 0 {
			out = append(out, ',')
		}
		out = jsonrpc.AppendString(out, reqs[i].Key)
		out = append(out, ':')
		out = append(out, values[i]...)
	}
	return append(out, '}')
}

// deliver hands a client's answer (a JSON-RPC response POSTed on any replica) to the replica
// waiting for it. Forged, expired, foreign-session or already used ids give errBadAnswer
// without waking anyone, and without touching Redis; a result the request cannot take gives
// *badResultError the same way; so does an answer for a replica taken for
// gone, and one that no replica waits for. A publish Redis refuses gives errAsksUnavailable.
// caller is the session's caller, whose answers on their way to other replicas are bounded.
func (b *asks) deliver(ctx context.Context, sess *legacysession.Session, caller string, msg *jsonrpc.Message) error {
	if msg == nil || msg.Method != "" || (msg.Result == nil) == (msg.Error == nil) {
		return errBadAnswer
	}
	id, ok := answerIDOf(msg.ID)
	if !ok {
		return errBadAnswer
	}
	binding := sessionBinding(sess)
	c, err := b.checkAnswer(id, binding)
	if err != nil || b.isUsed(c) {
		return errBadAnswer
	}
	if msg.Result != nil {
		// Named to its client here, on whichever replica it reached, rather than refused
		// by the waiting one as if nobody waited for it.
		if _, err := era.InputResponse(era.InputRequest{Method: c.kind.method()}, msg.Result); err != nil {
			return &badResultError{Method: c.kind.method()}
		}
	}
	if c.replica == b.replica {
		if !b.accept(c, msg.Result, msg.Error, nil) {
			return errBadAnswer
		}
		return nil
	}
	if b.notices == nil {
		return errBadAnswer // one replica: an id it did not mint has nobody waiting
	}
	return b.forward(ctx, c, id, binding, caller, msg)
}

// answerable reports whether msg is an answer whose id names a request of sess that is still
// waiting, as far as this replica knows without asking another: authentic, this session's and
// caller's, before its deadline and not known used. It changes nothing.
func (b *asks) answerable(sess *legacysession.Session, msg *jsonrpc.Message) bool {
	id, ok := answerIDOf(msg.ID)
	if !ok || !sessionBound(sess) {
		return false
	}
	c, err := b.checkAnswer(id, sessionBinding(sess))
	return err == nil && !b.isUsed(c)
}

// checkAnswer opens id and checks that it belongs to binding and has not expired.
func (b *asks) checkAnswer(id, binding string) (*answerClaims, error) {
	c, err := b.openAnswerID(id)
	if err != nil {
		return nil, err
	}
	if c.binding != binding || !b.now().Before(c.deadline) {
		return nil, errAnswerID
	}
	return c, nil
}

// accept hands an answer to the round waiting for it. It reports false, and changes nothing,
// when no waiter of this replica is waiting under c.r for this session before its deadline,
// or when the result is not a valid answer to the request (the client may then answer again).
// corr is the correlation id of the forward that brought it from another replica, nil when the
// client POSTed it here; the id is recorded used under it (takeForwarded).
func (b *asks) accept(c *answerClaims, result json.RawMessage, rpcErr *jsonrpc.Error, corr *[16]byte) bool {
	b.mu.Lock()
	w := b.waiters[c.r]
	b.mu.Unlock()
	if w == nil || w.binding != c.binding || !b.now().Before(w.deadline) {
		return false
	}
	a := askAnswer{idx: w.idx, remote: corr != nil}
	if rpcErr != nil {
		e := *rpcErr
		e.Data = bytes.Clone(e.Data)
		a.rpcErr = &e
	} else {
		// The result may live in a request buffer the edge reuses once deliver returns.
		v, err := era.InputResponse(w.req, bytes.Clone(result))
		if err != nil {
			return false
		}
		a.value, a.declined = v, declined(w.req.Method, result)
	}
	b.mu.Lock()
	if b.waiters[c.r] != w {
		b.mu.Unlock()
		return false // another answer, or the end of the round, came first
	}
	delete(b.waiters, c.r)
	b.releaseLocked(w.binding, w.caller, 1)
	var by [16]byte
	if corr != nil {
		by = *corr
	}
	tag := callerTag(w.caller)
	b.markUsedLocked(c.r, by, tag)
	b.mu.Unlock()
	w.answers <- a
	b.publishUsed(c, tag)
	return true
}

// declined reports whether an elicitation result is a decline or a cancel: the user said no.
func declined(method string, result json.RawMessage) bool {
	if method != "elicitation/create" {
		return false
	}
	var r struct {
		Action string `json:"action"`
	}
	return json.Unmarshal(result, &r) == nil && r.Action != "accept"
}

// askKind is the kind of a request to a client, as it travels sealed in an answer id.
type askKind uint8

const (
	kindElicitation askKind = iota
	kindSampling
	kindRoots
	kindConfirm
	kindCount
)

// valid reports whether k is a known kind.
func (k askKind) valid() bool { return k < kindCount }

// label is k's value of the metric label kind.
func (k askKind) label() string {
	switch k {
	case kindSampling:
		return metrics.AskKindSampling
	case kindRoots:
		return metrics.AskKindRoots
	case kindConfirm:
		return metrics.AskKindConfirm
	default:
		return metrics.AskKindElicitation
	}
}

// method is the method of the requests of kind k.
func (k askKind) method() string {
	switch k {
	case kindSampling:
		return era.MethodSamplingCreate
	case kindRoots:
		return era.MethodRootsList
	}
	return era.MethodElicitationCreate
}

// kindOf is "confirm" for the gateway's own confirmation, else the kind of the method.
func kindOf(req *era.InputRequest) askKind {
	switch {
	case req.Key == mrtr.ConfirmKey:
		return kindConfirm
	case req.Method == "sampling/createMessage":
		return kindSampling
	case req.Method == "roots/list":
		return kindRoots
	default:
		return kindElicitation
	}
}

// replyTopic is the notice topic of the replica named replica.
func replyTopic(replica [16]byte) string { return "lr:" + hex.EncodeToString(replica[:]) }

// usedTopic carries the answer ids the asking replicas took to every replica, so that a replay
// of one is refused wherever it lands, before Redis is touched.
const usedTopic = "lu"

// usedNotice is an answer id taken: its r and deadline, and whose it is.
type usedNotice struct {
	R        string `json:"r"`
	Deadline int64  `json:"d"` // Unix milliseconds
	// Caller is the callerTag of the caller whose answer used the id: the share of the ids
	// known used it counts against on every replica.
	Caller string `json:"c,omitempty"`
}

// callerTag names a caller (issuer and subject) in what replicas tell each other through
// Redis, without the caller in clear: the first 16 bytes of its SHA-256, in hex.
func callerTag(caller string) string {
	sum := sha256.Sum256([]byte(caller))
	return hex.EncodeToString(sum[:16])
}

// isUsed reports whether the id c names is known used.
func (b *asks) isUsed(c *answerClaims) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.used.Peek(c.r)
	return ok
}

// usedBy reports whether the id r names is known used by the answer the forward whose
// correlation id is corr brought.
func (b *asks) usedBy(r, corr [16]byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	by, ok := b.used.Peek(r)
	return ok && by == corr
}

// markUsedLocked records r as used, by the forward whose correlation id is corr (zero when
// none, or not known), against the share of the caller tagged tag (callerTag; "" for a
// notice of a replica that names none): a caller at its share forgets its own id recorded
// longest ago, in constant time, never another caller's (sharelru). An id is refused past its
// deadline whether it is recorded or not, so none needs to be kept longer. b.mu is held.
func (b *asks) markUsedLocked(r, corr [16]byte, tag string) {
	if _, ok := b.used.Peek(r); ok {
		return
	}
	// Every caller has a share, those a notice names none for together too: none is public.
	b.used.Put(r, corr, "c:"+tag, 0)
}

// publishUsed tells the other replicas that the id c names is used by the caller tagged tag, best effort and in the
// background: the answer that used it does not wait on Redis.
func (b *asks) publishUsed(c *answerClaims, tag string) {
	if b.notices == nil {
		return
	}
	msg, err := json.Marshal(usedNotice{R: hex.EncodeToString(c.r[:]), Deadline: c.deadline.UnixMilli(), Caller: tag})
	if err != nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), b.forwardTimeout)
		defer cancel()
		if err := b.notices.Publish(ctx, usedTopic, msg); err != nil {
			b.m.RedisError(metrics.RedisOpNotice)
		}
	}()
}

// onUsed records an id another replica took.
func (b *asks) onUsed(msg []byte) {
	var n usedNotice
	if json.Unmarshal(msg, &n) != nil {
		return
	}
	r, ok := decodeCorr(n.R)
	deadline := time.UnixMilli(n.Deadline)
	if !ok || !b.now().Before(deadline) {
		return
	}
	b.mu.Lock()
	b.markUsedLocked(r, [16]byte{}, n.Caller)
	b.mu.Unlock()
}
