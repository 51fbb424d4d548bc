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

// runEntry is one tracked request. A pointer, so that untrack removes exactly the entry it
// added even when a client reuses an id while the first request still runs.
type runEntry struct {
	cancel context.CancelFunc
}

// cancelNotice is a cancellation sent to the other replicas.
type cancelNotice struct {
	Binding string `json:"b"`
	ID      string `json:"i"`
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
// the asks' forward timeout. Best effort, like the notification itself: a request that already
// ended, or a notice Redis drops or is too slow to take, changes nothing.
func (b *asks) cancel(ctx context.Context, sess *legacysession.Session, id json.RawMessage) {
	cid, ok := runID(id)
	if !ok {
		return
	}
	k := runKey{binding: sessionBinding(sess), id: cid}
	if b.cancelLocal(k) || b.notices == nil {
		return
	}
	payload, err := json.Marshal(cancelNotice{Binding: k.binding, ID: k.id})
	if err != nil {
		return
	}
	// Bounded as every other notice of the asks is: the notification's POST has no deadline
	// of its own, and a Redis slow to take the publish must not hold it.
	pctx, cancel := context.WithTimeout(ctx, b.forwardTimeout)
	defer cancel()
	if err := b.notices.Publish(pctx, cancelTopic, payload); err != nil {
		b.m.RedisError(metrics.RedisOpNotice)
	}
}

// onCancel handles a cancellation another replica (or this one) published.
func (b *asks) onCancel(msg []byte) {
	var n cancelNotice
	if json.Unmarshal(msg, &n) != nil || len(n.ID) != 2*sha256.Size {
		return
	}
	b.cancelLocal(runKey{binding: n.Binding, id: n.ID})
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
