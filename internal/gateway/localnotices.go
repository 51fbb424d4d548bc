package gateway

import (
	"bytes"
	"context"
	"sync"

	"github.com/mcp-gateway/gateway/internal/store"
)

// localNoticeBuffer bounds the notices waiting for one subscription; more are dropped, as
// Redis pub/sub drops them for a subscriber that does not keep up.
const localNoticeBuffer = 256

// localNotices carries notices between the component sets of this process when there is no
// shared store. A reload builds a new endpoint beside the one still finishing its requests: a
// pre-2026 client's answer (or cancellation) that reaches the new one must find the request
// waiting on the old one, as an answer that lands on another replica finds it through Redis.
// Delivery is pub/sub's: asynchronous, to every subscription the topic has at the time,
// nothing kept.
type localNotices struct {
	mu   sync.Mutex
	subs map[string]map[*localSubscription]struct{}
}

var _ store.Notices = (*localNotices)(nil)

type localSubscription struct{ ch chan []byte }

// Publish hands msg to every subscription of topic.
func (n *localNotices) Publish(_ context.Context, topic string, msg []byte) error {
	msg = bytes.Clone(msg)
	n.mu.Lock()
	defer n.mu.Unlock()
	for s := range n.subs[topic] {
		select {
		case s.ch <- msg:
		default:
		}
	}
	return nil
}

// Subscribe calls fn with each message published on topic from now on, one at a time, until
// ctx ends.
func (n *localNotices) Subscribe(ctx context.Context, topic string, fn func(msg []byte)) {
	s := &localSubscription{ch: make(chan []byte, localNoticeBuffer)}
	n.mu.Lock()
	if n.subs == nil {
		n.subs = map[string]map[*localSubscription]struct{}{}
	}
	if n.subs[topic] == nil {
		n.subs[topic] = map[*localSubscription]struct{}{}
	}
	n.subs[topic][s] = struct{}{}
	n.mu.Unlock()
	go func() {
		defer func() {
			n.mu.Lock()
			delete(n.subs[topic], s)
			if len(n.subs[topic]) == 0 {
				delete(n.subs, topic)
			}
			n.mu.Unlock()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case msg := <-s.ch:
				fn(msg)
			}
		}
	}()
}
