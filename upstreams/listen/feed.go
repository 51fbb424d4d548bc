package listen

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/era"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// errNoSubscribers ends a backend listen stream that nobody listens to any more.
var errNoSubscribers = errors.New("upstreams: the last subscriber left the listen")

// Listens shares backend listen streams between identical client listens (docs/protocol.md §5.5). An
// idle listen held through the gateway would otherwise cost a backend connection, its
// transport goroutines and buffers, and a relay goroutine, each; with Listens, clients whose
// listens would send a backend the same request share one stream, and every client gets its own
// copy of each notification, tagged with its own listen id.
//
// Identical means the same backend request: the same share of the subscriptions (so every
// subscriber gets exactly what its own stream would carry), the same _meta and the same
// Mcp-Param-* headers, and for a backend that exchanges tokens (RFC 8693) the same caller's
// token: such a backend's listen stream carries that caller's exchanged token
// (feedSpec.subject). Any other backend's listen streams carry the gateway's credentials, never
// the caller's (see backend.Request.FromCaller). Every caller is authenticated on its own
// request before it joins. The request id and trace context the backend sees are those of the
// client whose listen opened the stream.
//
// The notifications waiting for clients are charged to the replica's budget of result bytes
// (Source.Results): every listen's together to at most half of it, so that calls keep the
// other half however many listens fall behind, and one caller's listens on this replica to a
// sixteenth of it (callerShareDivisor), so that one caller's slow readers cannot take what
// other callers' listens need.
type Listens struct {
	src    *Source
	limits queueLimits
	mu     sync.Mutex
	feeds  map[string]*feed // the open shared streams by feedSpec.key
	// queued is the listens' part of the results budget, nil when that is unbounded.
	queued *bodyread.Budget
	// callers are the callers' shares of queued, each held while its caller has a listen open;
	// the callers without a key share one (Caller.Key). nil when the budget is unbounded.
	callers *bodyread.Shares
}

// Divisors of the replica's budget of result bytes: every listen's queued notifications
// together may hold half of it, one caller's a sixteenth (8 MiB of the default 128 MiB, more
// than its 32 listens' queues hold at their own limits with the batch being written: 16 MiB).
const (
	listensShareDivisor = 2
	callerShareDivisor  = 16
)

// New returns a Listens for the backends of src.
func New(src *Source) *Listens {
	ls := &Listens{src: src, limits: defaultQueueLimits, feeds: make(map[string]*feed)}
	if src.Results != nil {
		ls.queued = bodyread.NewShare(src.Results, src.Results.Max()/listensShareDivisor)
		ls.callers = bodyread.NewSharesKeyless(ls.queued, src.Results.Max()/callerShareDivisor, bodyread.KeylessShareOne)
	}
	return ls
}

// Held is what caller's listens hold queued now, charged to its share (docs/client-bounds.md);
// 0 when it has no listen open or the budget is unbounded.
func (ls *Listens) Held(caller string) int64 { return ls.callers.InUse(caller) }

// Listen is Source.Listen with backend streams shared between identical listens. A client
// that leaves ends the backend streams only it still listens to; one that joins a stream already
// open gets the notifications from then on.
func (ls *Listens) Listen(ctx context.Context, id, params json.RawMessage, hdr http.Header, visible func(names.Kind, names.Target) bool, emit func(msg []byte) error) error {
	return ls.ListenFor(ctx, id, params, hdr, Caller{Visible: visible}, emit)
}

// ListenFor is Listen for a caller described by c.
func (ls *Listens) ListenFor(ctx context.Context, id, params json.RawMessage, hdr http.Header, c Caller, emit func(msg []byte) error) error {
	return ls.src.listen(ctx, ls, ls.limits, id, params, hdr, c, emit)
}

// feedSpec is what opens one backend listen stream.
type feedSpec struct {
	src     *Source
	b       *backend.Backend
	share   *share
	meta    json.RawMessage // the client's _meta, sent on
	version string
	id      json.RawMessage // the id of the listen that opens the stream
	pass    http.Header
	// subject is the caller's verified token for a backend that exchanges tokens
	// (backend.Backend.SubjectFor), "" for any other; subjectKey is its backend.SubjectKey and
	// caller the caller's key (Caller.Key). Such a backend sees every listen as its caller, as
	// it sees every call: the stream carries the caller's exchanged token, never the gateway's
	// credentials, and only listens of the same token share it.
	subject, subjectKey, caller string
}

// request is what the backend request of s's stream is, short of its body: for a backend
// that exchanges tokens, one caller's (its token exchanged, its failure charged to it); for
// any other, one made for every listener at once.
func (s *feedSpec) request() backend.Request {
	if !s.b.ExchangesTokens() {
		return backend.Request{Method: wire.MethodListen, Version: s.version, Header: s.pass, Shared: true}
	}
	return backend.Request{Method: wire.MethodListen, Version: s.version, Header: s.pass, Subject: s.subject,
		SubjectKey: s.subjectKey, Caller: s.caller, FromCaller: true}
}

// key identifies the backend request of s, short of its id and its trace and request-id
// headers.
func (s *feedSpec) key() string {
	var k strings.Builder
	k.WriteString(s.b.Name())
	k.WriteByte(0)
	// A fixed-length digest after the name, which holds no NUL: one token's streams apart from
	// every other's.
	k.WriteString(s.subjectKey)
	k.Write(appendListenRequest(json.RawMessage(`0`), s.meta, s.share))
	var params []string
	for name, vs := range s.pass {
		if ck := http.CanonicalHeaderKey(name); strings.HasPrefix(ck, mcpheader.ParamPrefix) {
			params = append(params, ck+": "+strings.Join(vs, "\x00"))
		}
	}
	slices.Sort(params)
	for _, p := range params {
		k.WriteByte(0)
		k.WriteString(p)
	}
	return k.String()
}

// feed is one backend listen stream and the subscribers it delivers to.
type feed struct {
	spec   feedSpec
	hub    *Listens // nil for a stream private to one listen
	key    string
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the stream has ended and every subscriber has heard so
	mu     sync.Mutex
	// subs maps each subscriber to what it subscribed to on this stream. Subscribers share a
	// stream only when their shares are equal (see feedSpec.key), yet each is filtered by its
	// own, so that no notification reaches a listener that did not ask for it, however the
	// streams are shared.
	subs  map[*subscriber]*listenFilter
	ended bool
	// started: the backend took the listen (start). A stream that ends after that ends its
	// subscribers' listens (subscriber.ended); one that never started (refused, failed, or
	// answered at once) is a backend left out of them.
	started bool
	// late: the stream was held back by the backend's rate limit before it started (heldBack);
	// when it starts, its subscribers are told what may have changed meanwhile (catchUp).
	late bool
	// refused: how many times in a row the backend answered the stream's request 429 (heldBack).
	refused int
}

// join adds s to the stream of spec in hub, opening it if there is none; a nil hub opens a
// stream for s alone. The stream outlives ctx, the opening client's, as long as it has
// subscribers; it keeps ctx's values.
func (hub *Listens) join(ctx context.Context, s *subscriber, spec *feedSpec) {
	s.mu.Lock()
	s.open++
	s.joined = true
	s.mu.Unlock()
	flt := newListenFilter(spec.share, spec.src.readURI(spec.b.Name()))
	var key string
	if hub != nil {
		key = spec.key()
		hub.mu.Lock()
		defer hub.mu.Unlock()
		if f := hub.feeds[key]; f != nil {
			f.add(s, flt)
			return
		}
	}
	fctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	f := &feed{spec: *spec, hub: hub, key: key, cancel: cancel, done: make(chan struct{}),
		subs: make(map[*subscriber]*listenFilter, 1)}
	f.add(s, flt)
	if hub != nil {
		hub.feeds[key] = f
	}
	go f.run(fctx)
}

// streamBudget is what the buffers of f's backend stream are charged to: the listens' part of
// the replica's budget of result bytes, for a stream shared by listens of any caller; the whole
// budget for a stream of one Source.Listen.
func (f *feed) streamBudget() *bodyread.Budget {
	if f.hub != nil && f.hub.queued != nil {
		return f.hub.queued
	}
	return f.spec.src.Results
}

func (f *feed) add(s *subscriber, flt *listenFilter) {
	f.mu.Lock()
	f.subs[s] = flt
	f.mu.Unlock()
	s.feeds = append(s.feeds, f)
}

// run opens f's backend stream and relays it until it ends. A stream the backend's rate limit
// held back before it started (its 429 to the listen, or the wait a 429 to another request asked
// for, backend.ErrRateLimitWait) is opened again once the wait has passed, for as long as it has
// subscribers: the backend is up, and only asked for time, so its listeners neither lose it for
// the rest of their listens (a stream that fails to start is otherwise left out of them) nor
// see their listens end (which a pre-2026 client's GET stream, opened again during the wait,
// would meet again and again).
func (f *feed) run(ctx context.Context) {
	defer f.end()
	for {
		var err error
		if f.spec.b.Era() == era.Legacy {
			err = f.legacyBackend(ctx) // docs/protocol.md §7: the legacy GET stream
		} else {
			err = f.backend(ctx)
		}
		wait, held := f.heldBack(err)
		if !held {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// heldBack reports how long to wait before opening f's stream again when err is the backend's
// rate limit and the stream had not started; false otherwise. A request held back unsent
// (backend.ErrRateLimitWait) waits what is left of the wait. One the backend itself answered
// 429 waits what it asked, and twice as long as the wait before each time it answers so again,
// up to wire.MaxRetryAfter: its 429 starts a wait that holds back every request of the backend
// (or of the caller), so a backend that refuses listens, and only them (a bound on its streams,
// say), would otherwise have its calls refused for as long as anyone listens, the stream sent
// again the moment each wait passed and refused again.
func (f *feed) heldBack(err error) (time.Duration, bool) {
	var rl *wire.RateLimitError
	if !errors.As(err, &rl) {
		return 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started {
		return 0, false
	}
	f.late = true
	if errors.Is(err, backend.ErrRateLimitWait) {
		return rl.RetryAfter, true
	}
	wait := rl.RetryAfter
	for i := 0; i < f.refused && wait < wire.MaxRetryAfter; i++ {
		wait = min(2*wait, wire.MaxRetryAfter)
	}
	f.refused++
	return wait, true
}

// end tells every subscriber that the stream has ended. A listen that arrives from now on
// opens a new stream.
func (f *feed) end() {
	if f.hub != nil {
		f.hub.mu.Lock()
		if f.hub.feeds[f.key] == f {
			delete(f.hub.feeds, f.key)
		}
		f.hub.mu.Unlock()
	}
	f.mu.Lock()
	subs, started := f.subs, f.started
	f.subs, f.ended = nil, true
	f.mu.Unlock()
	for s := range subs {
		s.ended(started)
	}
	f.cancel(nil)
	close(f.done)
}

// start records that the backend took the listen: the first notification of a 2026-07-28
// backend's listen stream, a pre-2026 backend's GET stream with its subscriptions made. From now
// on the stream's end ends its subscribers' listens.
func (f *feed) start() {
	f.mu.Lock()
	f.started = true
	late := f.late
	f.mu.Unlock()
	if late {
		f.catchUp()
	}
}

// catchUp tells the subscribers of a stream that started late (heldBack) of everything its
// share asks for: the backend's list_changed and resources/updated it may have sent while its
// stream was held back were not heard, and the lists its listeners read meanwhile left the
// backend out (a backend in a rate limit's wait is left out of lists). Each notification says
// only that something may have changed, so one too many costs its client a read.
func (f *feed) catchUp() {
	sh, upstream := f.spec.share, f.spec.b.Name()
	for _, c := range [...]struct {
		asked  bool
		method string
	}{
		{sh.ToolsListChanged, wire.NotifToolsListChanged},
		{sh.PromptsListChanged, wire.NotifPromptsListChanged},
		{sh.ResourcesListChanged, wire.NotifResourcesListChanged},
	} {
		if c.asked {
			f.publish(listenEvent{method: c.method})
		}
	}
	for _, uri := range sh.ResourceSubscriptions {
		if t, name, ok := f.spec.src.Names.ClientResource(upstream, uri, nil); ok {
			f.publish(listenEvent{method: wire.NotifResourcesUpdated, uri: name, target: t.Name})
		}
	}
}

// publish hands ev to every subscriber that subscribed to it and may see it. It never waits
// for a client. A list_changed first drops the backend's cached lists, so subscribers that list
// again on hearing it get the new list from this replica, and the other replicas hear of it
// (Source.Changed).
func (f *feed) publish(ev listenEvent) {
	if ev.method != wire.NotifResourcesUpdated {
		if changed := f.spec.src.Changed; changed != nil {
			changed(f.spec.b.Name(), ev.method)
		}
	}
	upstream := f.spec.b.Name()
	f.mu.Lock()
	defer f.mu.Unlock()
	for s, flt := range f.subs {
		s.offer(upstream, flt, ev)
	}
}

// remove takes s off the stream; the last subscriber to leave ends it and waits until it has
// ended, so the backend connection is closed by the time the last listen returns.
func (f *feed) remove(s *subscriber) {
	if f.hub != nil {
		f.hub.mu.Lock()
	}
	f.mu.Lock()
	delete(f.subs, s)
	last := len(f.subs) == 0 && !f.ended
	if last && f.hub != nil && f.hub.feeds[f.key] == f {
		delete(f.hub.feeds, f.key) // nobody may join a stream that is being closed
	}
	f.mu.Unlock()
	if f.hub != nil {
		f.hub.mu.Unlock()
	}
	if last {
		f.cancel(errNoSubscribers)
		<-f.done
	}
}

// subscriber is one client listen: the notifications of its backend streams wait in queue
// until the client's own goroutine writes them, so a slow client holds up no other subscriber
// of a shared stream. The queue is bounded (see eventQueue): a client that falls behind gets
// coalesced resource updates, and one that overflows even those has its listen ended with
// Overflow, since it has then missed notifications it cannot learn of otherwise.
type subscriber struct {
	wake   chan struct{} // signalled, never blocking, when queue or open changed
	feeds  []*feed       // written only by the client's goroutine
	caller Caller
	hub    *Listens // whose caller share the queue is charged to; nil for none
	mu     sync.Mutex
	queue  eventQueue
	open   int // backend streams that have not ended
	// joined: it joined a backend stream; a listen that joined none and holds idle
	// (Caller.HoldIdle) is not ended by its open count being 0.
	joined bool
	// broken: a backend stream that had started ended (the backend restarted, dropped the
	// connection, or ended its listen). The listen ends gracefully, however many other streams
	// it has open, so that its client listens again, which opens that stream again: a listen
	// left running without it would say nothing of the notifications it no longer hears.
	broken bool
	over   bool // the queue overflowed: the listen ends, and nothing more is queued
	// overBudget: it overflowed because the budget (the caller's share or the replica's) could
	// not take a notification; the listen ends with OverBudget rather than Overflow.
	overBudget bool
}

// newSubscriber returns a subscriber whose queue is charged to c's share of hub's budget (none
// for a nil hub); it must leave, which gives back what it holds and its share.
func newSubscriber(hub *Listens, limits queueLimits, c Caller) *subscriber {
	c.Spell = nil // needed only to set the listen up; an idle listen holds no more
	s := &subscriber{wake: make(chan struct{}, 1), caller: c, hub: hub, queue: eventQueue{limits: limits}}
	if hub != nil {
		s.queue.budget = hub.callers.Take(c.Key)
	}
	return s
}

// offer queues ev, from the backend upstream, for the client if flt (what the client
// subscribed to on that backend's stream) covers it and the caller's policy lets it read the
// resource a resources/updated names, or for a list_changed gives it anything of the backend
// (Caller.Reaches). Otherwise the drop is reported to Caller.Dropped.
// Neither check nor the queue depends on what else is queued: offer is O(1) however slow the
// client.
func (s *subscriber) offer(upstream string, flt *listenFilter, ev listenEvent) {
	cover, ok := flt.covers(ev)
	switch {
	case !ok:
		s.drop(DropUnsubscribed, 1)
		return
	case ev.method == wire.NotifResourcesUpdated && s.caller.Visible != nil &&
		!s.caller.Visible(names.KindResource, names.Target{Upstream: upstream, Name: ev.target}):
		s.drop(DropHidden, 1)
		return
	case ev.method != wire.NotifResourcesUpdated && !s.caller.reaches(upstream):
		s.drop(DropHidden, 1)
		return
	}
	ev.cover = cover
	s.push(ev)
}

// push queues ev unless the same notification is still waiting: a client that has not yet
// been told a list changed, or a resource was updated, learns nothing more from a second copy.
// When even coalesced the queue cannot hold ev, it is emptied and the listen is marked to end
// with Overflow; nothing more is queued.
func (s *subscriber) push(ev listenEvent) {
	s.mu.Lock()
	coalesced, lost := 0, 0
	if s.over {
		lost = 1
	} else if c, ok := s.queue.push(ev); ok {
		coalesced = c
	} else {
		lost = s.queue.len() + 1
		s.overBudget = s.queue.overBudget
		s.queue.reset()
		s.over = true
	}
	s.mu.Unlock()
	s.drop(DropCoalesced, coalesced)
	s.drop(DropOverflow, lost)
	s.signal()
}

func (s *subscriber) drop(cause string, n int) {
	if n > 0 && s.caller.Dropped != nil {
		s.caller.Dropped(cause, n)
	}
}

// ended hears that one of s's backend streams has ended; started says it had started (feed.start).
func (s *subscriber) ended(started bool) {
	s.mu.Lock()
	s.open--
	s.broken = s.broken || started
	s.mu.Unlock()
	s.signal()
}

func (s *subscriber) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// take returns the waiting notifications, oldest first, and empties the queue; ended reports
// that the listen's backend streams have ended (every one, or one that had started:
// subscriber.broken; a listen that joined none ends at once unless it holds idle), over the error the listen ends with when the queue overflowed (nil
// otherwise). The notifications stay charged to the budget until flush has written them or
// given up.
func (s *subscriber) take() (q []listenEvent, ended bool, over *jsonrpc.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q = s.queue.items
	s.queue.detach() // an idle listen holds no queue
	switch {
	case s.overBudget:
		over = OverBudget
	case s.over:
		over = Overflow
	}
	return q, s.open == 0 && (s.joined || !s.caller.HoldIdle) || s.broken, over
}

// relay emits the queued notifications, tagged with id, until ctx is done, emit fails, the
// queue overflows, or its backend streams have ended (subscriber.take); then it emits the
// listen's end: the overflow error, or the graceful-end result.
//
// An idle listen spends its life blocked in relay's select, at the bottom of its handler
// goroutine's stack; the work between wake-ups is in flush, so that the frames of an idle stream
// stay small. The runtime halves a goroutine's stack at a GC only while less than a quarter of it
// is in use, so a few hundred bytes more at the blocking point keep every idle stream's stack
// twice as large (docs/performance.md).
func (s *subscriber) relay(ctx context.Context, id json.RawMessage, emit func([]byte) error) error {
	for {
		if done, err := s.flush(ctx, id, emit); done {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
		}
	}
}

// flush emits what is queued and, when the listen is over, its end; done reports that relay
// must return err.
//
//go:noinline
func (s *subscriber) flush(ctx context.Context, id json.RawMessage, emit func([]byte) error) (done bool, err error) {
	q, ended, over := s.take()
	for i, ev := range q {
		if ctx.Err() != nil {
			s.giveBack(q[i:])
			return true, nil
		}
		err := emit(ev.render(id))
		// Written (or never to be): its bytes are the client's connection's now.
		s.queue.budget.Return(int64(eventCost(ev)))
		if err != nil {
			s.giveBack(q[i+1:])
			return true, err
		}
	}
	switch {
	case ctx.Err() != nil && (over != nil || ended):
		return true, nil
	case over != nil:
		return true, emit(jsonrpc.AppendError(nil, id, over))
	case ended:
		return true, emit(jsonrpc.AppendResult(nil, id, listenEndResult(id)))
	}
	return false, nil
}

// giveBack returns the charge of notifications taken (take) that will not be written.
func (s *subscriber) giveBack(q []listenEvent) {
	n := 0
	for _, ev := range q {
		n += eventCost(ev)
	}
	s.queue.budget.Return(int64(n))
}

// leave takes s off every backend stream it listens to, then gives back what its queue holds
// and its caller's share: whatever ended the listen (the client gone, its token expired, the
// replica shutting down, every backend stream ended), nothing it queued stays charged.
func (s *subscriber) leave() {
	for _, f := range s.feeds {
		f.remove(s)
	}
	s.mu.Lock()
	s.queue.reset()
	s.over = true // nothing more is queued
	s.mu.Unlock()
	if s.hub != nil {
		s.hub.callers.Give(s.caller.Key)
	}
}
