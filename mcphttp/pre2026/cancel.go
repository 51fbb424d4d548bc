package pre2026

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/metrics"
)

// cancelTopic carries notifications/cancelled to every replica. One topic for all sessions,
// the session and request named in the message, so that a replica needs one subscription in
// all rather than one Redis connection per running request; cancellations are rare enough
// that every replica looking each one up in its map costs nothing.
const cancelTopic = "lc"

// runKey names a running legacy request: the session binding it runs for and the digest of its
// JSON-RPC id in canonical form (runID).
type runKey struct {
	binding string
	id      string
}

// runID is the key of a request id: the hex SHA-256 of its canonical form. A client's id may be
// a string of up to server.maxJSONTokenBytes (1 MiB); a digest of fixed size is what the map of
// running requests keeps for each and what a cancellation tells every replica, however long
// the id (jsonrpc.CanonicalID). False for an id that is not a string or an integer.
func runID(id json.RawMessage) (string, bool) {
	cid, ok := jsonrpc.CanonicalID(id)
	if !ok {
		return "", false
	}
	sum := sha256.Sum256([]byte(cid))
	return hex.EncodeToString(sum[:]), true
}

// cancelledID is the requestId of a client's notifications/cancelled (params, which the strict
// decode read), read by its exact name: nil when it has none. A member spelled otherwise
// ("RequestId", "requestid"), which encoding/json would have taken for it, names nothing, as it
// does to a peer that reads names as MCP spells them: the notification cancels nothing then.
func cancelledID(params json.RawMessage) json.RawMessage {
	var id json.RawMessage
	if len(params) == 0 {
		return nil
	}
	_ = jsonrpc.Members(params, func(k, v []byte) error {
		if string(k) == "requestId" {
			id = v
		}
		return nil
	})
	return id
}

// runEntry is one tracked request. A pointer, so that untrack removes exactly the entry it
// added even when a client reuses an id while the first request still runs.
type runEntry struct {
	cancel context.CancelFunc
}

// cancelNotice is a cancellation sent to the other replicas. Corr and From are the sending
// replica's correlation id and reply topic: the replica that cancels the request acknowledges
// there, which ends the sending again (cancel).
type cancelNotice struct {
	Binding string `json:"b"`
	ID      string `json:"i"`
	Corr    string `json:"c,omitempty"`
	From    string `json:"f,omitempty"`
}

// track registers a running legacy request (its JSON-RPC id as the client sent it) for
// notifications/cancelled. untrack, which the caller must call when the request ends, is
// idempotent. An id that is not a string or an integer is not tracked.
func (b *asks) track(sess *legacysession.Session, id json.RawMessage, cancel context.CancelFunc) (untrack func()) {
	cid, ok := runID(id)
	if !ok {
		return func() {}
	}
	k := runKey{binding: sessionBinding(sess), id: cid}
	e := &runEntry{cancel: cancel}
	b.mu.Lock()
	b.running[k] = append(b.running[k], e)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		list := b.running[k]
		for i, x := range list {
			if x == e {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(b.running, k)
		} else {
			b.running[k] = list
		}
	}
}

// cancel cancels the request named by a client's notifications/cancelled, on whichever replica
// runs it: here if it runs here, else through a notice every replica hears, published within
// the asks' forward timeout. caller is the client's caller key (Incoming.BoundKey).
//
// Pub/sub delivers to whoever is subscribed at that instant: a notice published while the
// replica running the call makes its subscription again (go-redis reconnects after Redis
// dropped its connection) reaches nobody, and the call would run on. So, as an answer is
// (forward), the notice goes again under the same correlation id every resendEvery until the
// replica that cancelled the request acknowledges it, for at most the forward timeout. That
// happens after the client's 202, on a goroutine of its own, at most MaxForwardsPerCaller of
// them for one caller and MaxPending in all; past either the notice goes once, as it did
// before. A cancellation for a request that runs nowhere (it ended already, or was never
// sent) is sent again until the timeout and changes nothing; one that reaches a replica just
// before the request it names starts there still cancels it, as the client meant. The same
// cancellation sent again while the first is still being sent (a client that resends its
// notifications/cancelled) publishes nothing and takes none of the caller's resends: the
// first covers it, and copies must not crowd out the caller's cancellations of other requests.
// Only once the first is published does it cover the copies, though: one that comes while the
// first's publish is still on its way (Redis slow or down) is published once itself, taking
// none of the resends either, so that the first's failing does not lose both.
func (b *asks) cancel(ctx context.Context, sess *legacysession.Session, caller string, id json.RawMessage) {
	cid, ok := runID(id)
	if !ok {
		return
	}
	k := runKey{binding: sessionBinding(sess), id: cid}
	if b.cancelLocal(k) || b.notices == nil {
		return
	}
	corr := random16()
	payload, err := json.Marshal(cancelNotice{Binding: k.binding, ID: k.id, Corr: hex.EncodeToString(corr[:]), From: b.topic})
	if err != nil {
		return
	}
	resend, sending := b.startCancel(k, corr, caller)
	if sending {
		return
	}
	// Bounded as every other notice of the asks is: the notification's POST has no deadline
	// of its own, and a Redis slow to take the publish must not hold it.
	pctx, cancel := context.WithTimeout(ctx, b.forwardTimeout)
	defer cancel()
	if err := b.notices.Publish(pctx, cancelTopic, payload); err != nil {
		b.m.RedisError(metrics.RedisOpNotice)
		if resend != nil {
			b.endCancel(k, corr, caller)
		}
		return
	}
	if resend != nil {
		b.mu.Lock()
		b.cancelling[k] = true // published: from now on it covers copies
		b.mu.Unlock()
		go b.resendCancel(k, corr, caller, payload, resend)
	}
}

// startCancel registers the cancellation of k, under corr, to be sent again (resend, its
// acknowledgement's channel) within the bounds: none past MaxForwardsPerCaller of caller's or
// MaxPending in all, when it goes once. sending says the same cancellation has been published
// and is being sent again already, when nothing is registered. One registered whose first
// publish has not succeeded yet covers nothing: the copy goes once (nil, false).
func (b *asks) startCancel(k runKey, corr [16]byte, caller string) (resend chan bool, sending bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if published, ok := b.cancelling[k]; ok {
		return nil, published
	}
	if len(b.cancels) >= b.cfg.MaxPending || b.cancelsOf[caller] >= b.cfg.MaxForwardsPerCaller {
		return nil, false
	}
	resend = make(chan bool, 1)
	b.cancels[corr] = resend
	b.cancelsOf[caller]++
	b.cancelling[k] = false // registered, not yet published
	return resend, false
}

// endCancel unregisters what startCancel registered.
func (b *asks) endCancel(k runKey, corr [16]byte, caller string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.cancels, corr)
	delete(b.cancelling, k)
	decrement(b.cancelsOf, caller, 1)
}

// resendCancel publishes a cancellation again every resendEvery until a replica says it
// cancelled the request or the forward timeout has passed since the first.
func (b *asks) resendCancel(k runKey, corr [16]byte, caller string, payload []byte, ack chan bool) {
	defer b.endCancel(k, corr, caller)
	wait, cancel := context.WithTimeout(context.Background(), b.forwardTimeout)
	defer cancel()
	b.resendUntilAcked(wait, cancelTopic, payload, ack)
}

// onCancel handles a cancellation another replica (or this one) published: the replica that
// runs the request cancels it and tells the sender so. A later copy finds nothing to cancel
// and is not acknowledged, so a lost acknowledgement costs the sender resends until its
// timeout, which change nothing.
func (b *asks) onCancel(ctx context.Context, msg []byte) {
	var n cancelNotice
	if json.Unmarshal(msg, &n) != nil || len(n.ID) != 2*sha256.Size {
		return
	}
	if !b.cancelLocal(runKey{binding: n.Binding, id: n.ID}) || !validReplyTopic(n.From) {
		return
	}
	if _, ok := decodeCorr(n.Corr); !ok {
		return
	}
	// On a reply worker (onReply's), so that a Redis slow to take the acknowledgement does not
	// hold up the cancellations behind it.
	b.onReplyWorker(func() { b.acknowledge(ctx, n.From, n.Corr, true) })
}

// cancelLocal cancels the requests tracked under k on this replica and reports whether there
// were any. The entries stay until their requests untrack them.
func (b *asks) cancelLocal(k runKey) bool {
	b.mu.Lock()
	list := append([]*runEntry(nil), b.running[k]...)
	b.mu.Unlock()
	for _, e := range list {
		e.cancel()
	}
	return len(list) > 0
}
