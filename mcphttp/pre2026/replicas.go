package pre2026

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/metrics"
)

// Kinds of message on a replica's reply topic.
const (
	noticeAnswer = "a" // an answer for a request this replica sent
	noticeAck    = "k" // whether the replica an answer was forwarded to took it
)

// replyNotice is a message on a replica's reply topic. An answer's content is sealed
// (forwardedAnswer): what a client said to a backend's question (a typed secret, a sampled
// text) crosses Redis readable only by the replicas, which hold mrtr.keys.
type replyNotice struct {
	Type   string `json:"t"`
	Corr   string `json:"c"`           // correlation id, hex; echoed by the acknowledgement
	From   string `json:"f,omitempty"` // the forwarding replica's reply topic
	Sealed string `json:"s,omitempty"` // an answer's forwardedAnswer, sealed
	OK     bool   `json:"ok,omitempty"`
}

// forwardedAnswer is an answer on its way to the replica that asked. It carries the id exactly as
// the client sent it, so the asking replica opens and checks it itself rather than trusting the
// forwarding one, and the binding of the session it was POSTed in.
type forwardedAnswer struct {
	ID      string          `json:"i"`
	Binding string          `json:"b"`
	Result  json.RawMessage `json:"r,omitempty"`
	Error   *jsonrpc.Error  `json:"e,omitempty"`
	// Until is the last moment the asking replica may take the answer (Unix milliseconds),
	// halfway through the forwarding replica's wait for the acknowledgement: an answer that
	// arrives later (Redis stalled, then resumed) is not taken, since the client may have been
	// told by then that it was refused. The half left over covers the replicas' clocks
	// differing.
	Until int64 `json:"u,omitempty"`
}

// forward hands an answer for another replica to it through its reply topic and waits, at
// most forwardTimeout, for it to say whether it took the answer. Redis counts subscribers, but
// a live replica that no longer waits for this answer (answered already, timed out) is as much
// "nobody waiting" as one that is gone, and only the replica itself knows: hence the
// acknowledgement rather than PUBLISH's count.
//
// Pub/sub delivers to whoever is subscribed at that instant: a notice published while the
// asking replica's subscription is being made again (go-redis reconnects after its connection
// dropped) reaches nobody, and so does an acknowledgement published while this replica's is.
// So the answer goes again, under the same correlation id, every resendEvery until an
// acknowledgement comes back or the wait ends: the asking replica takes it once and
// acknowledges every copy alike (takeForwarded), so a subscription made again within the wait
// loses nothing, and one that is not loses the answer only as a replica that is gone does, the
// client being told.
//
// A refusal is final: the notice says until when it may be taken, well before the forward gives
// up (the publishes included, which are bounded by the same wait), so an answer delayed in a
// stalled Redis is never taken after the client heard it was refused. A replica whose
// acknowledgement never came is taken for gone for a while (goneFor): answers for it are
// refused at once, without touching Redis. Each caller may have at most MaxForwardsPerCaller
// answers on their way at once.
func (b *asks) forward(ctx context.Context, c *answerClaims, id, binding, caller string, msg *jsonrpc.Message) error {
	corr := random16()
	ack := make(chan bool, 1)
	if err := b.startForward(c, corr, caller, ack); err != nil {
		return err
	}
	defer func() {
		b.mu.Lock()
		delete(b.forwards, corr)
		delete(b.forwarding, c.r)
		decrement(b.forwardsOf, caller, 1)
		b.mu.Unlock()
	}()
	answer, err := json.Marshal(forwardedAnswer{ID: id, Binding: binding, Result: msg.Result, Error: msg.Error,
		Until: b.now().Add(b.forwardTimeout / 2).UnixMilli()})
	if err != nil {
		return fmt.Errorf("asks: encoding an answer for another replica: %w", err)
	}
	sealed, err := b.forwarded.Seal(answer)
	if err != nil {
		return fmt.Errorf("asks: sealing an answer for another replica: %w", err)
	}
	payload, err := json.Marshal(replyNotice{Type: noticeAnswer, Corr: hex.EncodeToString(corr[:]), From: b.topic, Sealed: sealed})
	if err != nil {
		return fmt.Errorf("asks: encoding an answer for another replica: %w", err)
	}
	wait, cancel := context.WithTimeout(ctx, b.forwardTimeout)
	defer cancel()
	topic := replyTopic(c.replica)
	if err := b.notices.Publish(wait, topic, payload); err != nil {
		b.m.RedisError(metrics.RedisOpNotice)
		return fmt.Errorf("%w: %w", errAsksUnavailable, err)
	}
	// Once taken the answer is acknowledged again; a failed resend is one copy fewer.
	if ok, acked := b.resendUntilAcked(wait, topic, payload, ack); acked {
		return b.acknowledged(c, caller, ok)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The asking replica is gone (or cut off from Redis): the answer has nowhere to go, and
	// neither will the next ones for it for a while.
	b.m.LegacyAsk(c.kind.label(), metrics.AskLost)
	b.markGone(c.replica)
	return errBadAnswer
}

// resendUntilAcked publishes payload on topic again every resendEvery (it was published once
// already) until ack says the receiver acted on it, or wait ends: Redis pub/sub reaches only who
// is subscribed at that instant, and a replica making its subscription again after a dropped
// connection misses what was sent meanwhile. acked says whether an acknowledgement came, ok
// what it said. Forwarded answers and cancellations go this way.
func (b *asks) resendUntilAcked(wait context.Context, topic string, payload []byte, ack <-chan bool) (ok, acked bool) {
	resend := time.NewTicker(min(resendEvery, b.forwardTimeout/4))
	defer resend.Stop()
	for {
		select {
		case ok := <-ack: // before anything else: it may have come while a resend was published
			return ok, true
		default:
		}
		select {
		case ok := <-ack:
			return ok, true
		case <-resend.C:
			if err := b.notices.Publish(wait, topic, payload); err != nil && wait.Err() == nil {
				b.m.RedisError(metrics.RedisOpNotice)
			}
		case <-wait.Done():
			return false, false
		}
	}
}

// acknowledge tells the replica listening on topic whether this one acted on its notice corr.
func (b *asks) acknowledge(ctx context.Context, topic, corr string, ok bool) {
	ack, err := json.Marshal(replyNotice{Type: noticeAck, Corr: corr, OK: ok})
	if err != nil {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, b.forwardTimeout)
	defer cancel()
	if err := b.notices.Publish(pctx, topic, ack); err != nil {
		b.m.RedisError(metrics.RedisOpNotice)
	}
}

// onReplyWorker runs f on a goroutine of its own, up to maxReplyWorkers at once, or here when
// every worker is busy (the subscription then waits): work that publishes an acknowledgement a
// slow Redis is slow to take must not hold up the notices behind it, nor this replica's own
// acknowledgements (they come on the same topic), or the replicas waiting for those would take a
// live replica for gone.
func (b *asks) onReplyWorker(f func()) {
	select {
	case b.replyWorkers <- struct{}{}:
		go func() {
			defer func() { <-b.replyWorkers }()
			f()
		}()
	default:
		f()
	}
}

// acknowledged ends a forward of caller's answer the asking replica answered: ok, it took the
// answer, whose id is known used from now on.
func (b *asks) acknowledged(c *answerClaims, caller string, ok bool) error {
	if !ok {
		return errBadAnswer
	}
	b.mu.Lock()
	b.markUsedLocked(c.r, [16]byte{}, callerTag(caller))
	b.mu.Unlock()
	return nil
}

// onReply handles a message on this replica's reply topic: an answer forwarded by another
// replica, which it checks as if the client had POSTed it here and then acknowledges, or the
// acknowledgement of an answer it forwarded or of a cancellation it sent (cancel.go).
func (b *asks) onReply(ctx context.Context, msg []byte) {
	var n replyNotice
	if json.Unmarshal(msg, &n) != nil {
		return
	}
	corr, ok := decodeCorr(n.Corr)
	if !ok {
		return
	}
	switch n.Type {
	case noticeAck:
		b.mu.Lock()
		ack := b.forwards[corr]
		if ack == nil {
			ack = b.cancels[corr]
		}
		b.mu.Unlock()
		if ack != nil {
			select {
			case ack <- n.OK:
			default: // a duplicate acknowledgement
			}
		}
	case noticeAnswer:
		if !validReplyTopic(n.From) {
			return
		}
		b.onReplyWorker(func() { b.takeForwarded(ctx, &n, corr) })
	}
}

// takeForwarded checks an answer another replica forwarded, as if the client had POSTed it
// here, takes it when it is good, and tells the forwarding replica whether it did. A copy of an
// answer it took already (forward sends it again until it hears back) is acknowledged as taken
// again, whenever it comes: the acknowledgement of the first may have been lost.
func (b *asks) takeForwarded(ctx context.Context, n *replyNotice, corr [16]byte) {
	took := false
	var a forwardedAnswer
	if pt, err := b.forwarded.Open(n.Sealed); err == nil && json.Unmarshal(pt, &a) == nil {
		if c, err := b.checkAnswer(a.ID, a.Binding); err == nil && c.replica == b.replica {
			if (a.Result == nil) != (a.Error == nil) && b.now().Before(time.UnixMilli(a.Until)) {
				took = b.accept(c, a.Result, a.Error, &corr)
			}
			took = took || b.usedBy(c.r, corr)
		}
	}
	b.acknowledge(ctx, n.From, n.Corr, took)
}

// decodeCorr parses a correlation id.
func decodeCorr(s string) ([16]byte, bool) {
	var c [16]byte
	if len(s) != 2*len(c) {
		return c, false
	}
	_, err := hex.Decode(c[:], []byte(s))
	return c, err == nil
}

// validReplyTopic reports whether topic is a replica's reply topic, the only place an
// acknowledgement may be published to.
func validReplyTopic(topic string) bool {
	_, ok := decodeCorr(topic[min(len(topic), 3):])
	return len(topic) == 3+32 && topic[:3] == "lr:" && ok
}

// startForward registers a forward of an answer for c's replica under the bounds: none for a
// replica taken for gone, at most MaxForwardsPerCaller for one caller, MaxPending in all.
func (b *asks) startForward(c *answerClaims, corr [16]byte, caller string, ack chan bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if until, ok := b.gone[c.replica]; ok {
		if b.now().Before(until) {
			return errBadAnswer
		}
		delete(b.gone, c.replica)
	}
	if b.forwarding[c.r] {
		// The same answer is already on its way: a replay, refused before Redis like one
		// that comes after the acknowledgement.
		return errBadAnswer
	}
	if len(b.forwards) >= b.cfg.MaxPending || b.forwardsOf[caller] >= b.cfg.MaxForwardsPerCaller {
		return errAsksBusy
	}
	b.forwards[corr] = ack
	b.forwardsOf[caller]++
	b.forwarding[c.r] = true
	return nil
}

// markGone takes replica for gone for goneFor, within maxGone entries (the expired go first;
// when none has, the oldest mark is not renewed and the replica is simply not recorded).
func (b *asks) markGone(replica [16]byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if len(b.gone) >= maxGone {
		for k, until := range b.gone {
			if !now.Before(until) {
				delete(b.gone, k)
			}
		}
		if len(b.gone) >= maxGone {
			return
		}
	}
	b.gone[replica] = now.Add(goneFor)
}
