package pre2026

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// cancelPayloads records every distinct cancellation published: one cancellation sent again
// goes under its own correlation id, so the same payload each time.
type cancelPayloads struct {
	store.Notices
	mu   sync.Mutex
	seen map[string]bool
}

func (c *cancelPayloads) Publish(ctx context.Context, topic string, msg []byte) error {
	if topic == cancelTopic {
		c.mu.Lock()
		c.seen[string(msg)] = true
		c.mu.Unlock()
	}
	return c.Notices.Publish(ctx, topic, msg)
}

func (c *cancelPayloads) distinct() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// TestAsksCancelSentAgainAddsNothing: a client that sends its notifications/cancelled for a
// request running on another replica again (three times within the forward timeout) makes
// one cancellation, sent again until acknowledged as it would be alone: the copies publish
// nothing of their own and take none of the caller's MaxForwardsPerCaller resends, so a
// cancellation of another request still gets one, and the request is cancelled. Before, each
// copy was a cancellation of its own, published and sent again, and MaxForwardsPerCaller
// copies left the caller's next cancellation going once.
func TestAsksCancelSentAgainAddsNothing(t *testing.T) {
	srv := testredis.Start(t)
	rigs := startRedisAsks(t, srv, nil, 2)
	a, b := rigs[0], rigs[1]
	seen := &cancelPayloads{Notices: b.b.notices, seen: map[string]bool{}}
	b.b.notices = seen
	b.b.forwardTimeout = time.Hour // the resends outlive the test unless acknowledged
	sess := testSession(1, "p1", allCaps)
	limit := b.b.cfg.MaxForwardsPerCaller
	for range limit {
		b.b.cancel(context.Background(), sess, testCaller, json.RawMessage(`"never-sent"`))
	}
	b.b.mu.Lock()
	mine, all := b.b.cancelsOf[testCaller], len(b.b.cancels)
	b.b.mu.Unlock()
	if mine != 1 || all != 1 || seen.distinct() != 1 {
		t.Fatalf("%d copies of one cancellation: %d of the caller's resends, %d in all, %d cancellations published; want 1, 1, 1",
			limit, mine, all, seen.distinct())
	}

	run, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	untrack := a.b.track(sess, json.RawMessage(`"call-2"`), cancelRun)
	defer untrack()
	b.b.cancel(context.Background(), sess, testCaller, json.RawMessage(`"call-2"`))
	b.b.mu.Lock()
	mine = b.b.cancelsOf[testCaller]
	b.b.mu.Unlock()
	if mine != 2 && run.Err() == nil {
		t.Errorf("the cancellation of another request has no resend of its own: %d of the caller's", mine)
	}
	select {
	case <-run.Done():
	case <-time.After(asksHang): // fail-safe
		t.Fatal("the request on A was not cancelled")
	}
}
