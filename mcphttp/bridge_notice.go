package mcphttp

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

// replyNotice is a message on a replica's reply topic. An answer carries the id exactly as the
// client sent it, so the asking replica opens and checks it itself rather than trusting the
// forwarding one, and the binding of the session it was POSTed in.
type replyNotice struct {
	Type    string          `json:"t"`
	Corr    string          `json:"c"`           // correlation id, hex; echoed by the acknowledgement
	From    string          `json:"f,omitempty"` // the forwarding replica's reply topic
	ID      string          `json:"i,omitempty"`
	Binding string          `json:"b,omitempty"`
	Result  json.RawMessage `json:"r,omitempty"`
	Error   *jsonrpc.Error  `json:"e,omitempty"`
	OK      bool            `json:"ok,omitempty"`
}

// forward hands an answer for another replica to it through its reply topic and waits, at
// most forwardTimeout, for it to say whether it took the answer. Redis counts subscribers, but
// a live replica that no longer waits for this answer (answered already, timed out) is as much
// "nobody waiting" as one that is gone, and only the replica itself knows: hence the
// acknowledgement rather than PUBLISH's count.
func (b *bridge) forward(ctx context.Context, c *answerClaims, id, binding string, msg *jsonrpc.Message) error {
	corr := random16()
	ack := make(chan bool, 1)
	b.mu.Lock()
	if len(b.forwards) >= b.cfg.MaxPending {
		b.mu.Unlock()
		return errBridgeBusy
	}
	b.forwards[corr] = ack
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.forwards, corr)
		b.mu.Unlock()
	}()
	payload, err := json.Marshal(replyNotice{Type: noticeAnswer, Corr: hex.EncodeToString(corr[:]), From: b.topic,
		ID: id, Binding: binding, Result: msg.Result, Error: msg.Error})
	if err != nil {
		return fmt.Errorf("bridge: encoding an answer for another replica: %w", err)
	}
	if err := b.notices.Publish(ctx, replyTopic(c.replica), payload); err != nil {
		b.m.RedisError(metrics.RedisOpNotice)
		return fmt.Errorf("%w: %w", errBridgeUnavailable, err)
	}
	t := time.NewTimer(b.forwardTimeout)
	defer t.Stop()
	select {
	case ok := <-ack:
		if !ok {
			return errBadAnswer
		}
		return nil
	case <-t.C:
		// The asking replica is gone (or cut off from Redis): the answer has nowhere to go.
		b.m.LegacyBridge(c.kind.label(), metrics.BridgeLost)
		return errBadAnswer
	case <-ctx.Done():
		return ctx.Err()
	}
}

// onReply handles a message on this replica's reply topic: an answer forwarded by another
// replica, which it checks as if the client had POSTed it here and then acknowledges, or the
// acknowledgement of an answer it forwarded.
func (b *bridge) onReply(ctx context.Context, msg []byte) {
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
		took := false
		if (n.Result == nil) != (n.Error == nil) {
			if c, err := b.checkAnswer(n.ID, n.Binding); err == nil && c.replica == b.replica {
				took = b.accept(c, n.Result, n.Error, true)
			}
		}
		ack, err := json.Marshal(replyNotice{Type: noticeAck, Corr: n.Corr, OK: took})
		if err != nil {
			return
		}
		pctx, cancel := context.WithTimeout(ctx, b.forwardTimeout)
		defer cancel()
		if err := b.notices.Publish(pctx, n.From, ack); err != nil {
			b.m.RedisError(metrics.RedisOpNotice)
		}
	}
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
