package pre2026

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
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

// failingPublish is Redis failing to take cancellations: the first publish waits for release
// before it fails, as one to a Redis that went away does until its timeout; every later one
// fails at once. attempts counts them.
type failingPublish struct {
	store.Notices
	entered, release chan struct{}
	mu               sync.Mutex
	attempts         int
}

func (f *failingPublish) Publish(ctx context.Context, topic string, msg []byte) error {
	if topic != cancelTopic {
		return f.Notices.Publish(ctx, topic, msg)
	}
	f.mu.Lock()
	f.attempts++
	first := f.attempts == 1
	f.mu.Unlock()
	if first {
		close(f.entered)
		<-f.release
	}
	return context.DeadlineExceeded
}

// TestAsksCancelSentAgainWhileThePublishFails: a client that sends its notifications/cancelled
// again while the first one's publish is on its way and then fails (Redis down) has the copy
// published too, instead of taken as covered by a first that never went out; neither takes a
// resend once both failed. Before, the copy published nothing and both were lost.
func TestAsksCancelSentAgainWhileThePublishFails(t *testing.T) {
	srv := testredis.Start(t)
	b := startRedisAsks(t, srv, nil, 1)[0].b
	pub := &failingPublish{Notices: b.notices, entered: make(chan struct{}), release: make(chan struct{})}
	b.notices = pub
	sess := testSession(1, "p1", allCaps)
	id := json.RawMessage(`"call-1"`)
	first := make(chan struct{})
	go func() {
		defer close(first)
		b.cancel(context.Background(), sess, testCaller, id)
	}()
	<-pub.entered
	b.cancel(context.Background(), sess, testCaller, id) // the client sends it again
	close(pub.release)
	<-first
	pub.mu.Lock()
	attempts := pub.attempts
	pub.mu.Unlock()
	if attempts != 2 {
		t.Errorf("the cancellation sent again during a failing publish was published %d times in all, want 2 (the first and the copy)", attempts)
	}
	b.mu.Lock()
	mine, all, pending := b.cancelsOf[testCaller], len(b.cancels), len(b.cancelling)
	b.mu.Unlock()
	if mine != 0 || all != 0 || pending != 0 {
		t.Errorf("after both publishes failed: %d of the caller's resends, %d in all, %d cancellations pending; want none", mine, all, pending)
	}
	// Redis back: the client's next copy is published and sent again as a first would be.
	b.notices = pub.Notices
	b.cancel(context.Background(), sess, testCaller, id)
	b.mu.Lock()
	mine = b.cancelsOf[testCaller]
	b.mu.Unlock()
	if mine != 1 {
		t.Errorf("a copy sent once Redis is back has %d of the caller's resends, want 1", mine)
	}
}

// TestAsksCancelForNothing: a notifications/cancelled naming a request that runs nowhere (never
// sent, or ended) is sent again until the forward timeout, as any other: no replica can tell
// that a request runs on no replica (each knows only its own), and only the acknowledgement of
// the one that cancelled it ends the resends, so this is the price of a cancellation that
// survives Redis dropping its subscriptions (TestCancelSurvivesDroppedSubscriptions). What it
// costs is bounded and the caller's own: while MaxForwardsPerCaller of them are being sent
// again, the caller's next cancellation, of a request running on another replica, still goes
// (once) and cancels it; and the resends end with the forward timeout, which gives the caller
// its slots back.
func TestAsksCancelForNothing(t *testing.T) {
	srv := testredis.Start(t)
	rigs := startRedisAsks(t, srv, nil, 2)
	a, b := rigs[0], rigs[1]
	b.b.forwardTimeout = 200 * time.Millisecond
	sess := testSession(1, "p1", allCaps)
	limit := b.b.cfg.MaxForwardsPerCaller
	held := func() int {
		b.b.mu.Lock()
		defer b.b.mu.Unlock()
		return b.b.cancelsOf[testCaller]
	}
	for i := range limit {
		b.b.cancel(context.Background(), sess, testCaller, json.RawMessage(fmt.Sprintf(`"never-sent-%d"`, i)))
	}
	// Held until their forward timeout, unless every one ended already.
	if got := held(); got != limit && got != 0 {
		t.Fatalf("%d cancellations for nothing hold %d of the caller's resends, want %d", limit, got, limit)
	}
	run, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	untrack := a.b.track(sess, json.RawMessage(`"call"`), cancelRun)
	defer untrack()
	b.b.cancel(context.Background(), sess, testCaller, json.RawMessage(`"call"`))
	select {
	case <-run.Done():
	case <-time.After(asksHang): // fail-safe
		t.Fatal("the request on A was not cancelled while the caller's resends were held")
	}
	mcptest.WaitFor(t, "the caller's resends given back", func() bool { return held() == 0 })
	b.b.mu.Lock()
	left := len(b.b.cancels) + len(b.b.cancelling)
	b.b.mu.Unlock()
	if left != 0 {
		t.Errorf("%d cancellations still registered after their forward timeout", left)
	}
}
