package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// noticeInbox collects one subscriber's messages.
type noticeInbox chan string

func (in noticeInbox) fn(msg []byte) { in <- string(msg) }

func (in noticeInbox) want(t *testing.T, msg string) {
	t.Helper()
	select {
	case got := <-in:
		if got != msg {
			t.Fatalf("got notice %q, want %q", got, msg)
		}
	case <-time.After(hangGuard): // fail-safe
		t.Fatalf("notice %q never arrived", msg)
	}
}

// waitSubscribers polls PUBSUB NUMSUB until topic has n subscribers.
func waitSubscribers(t *testing.T, r *Redis, topic string, n int64) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		got, err := r.subscribers(context.Background(), topic)
		if err == nil && got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %q has %d subscribers (%v), want %d", topic, got, err, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRedisNotices: two replicas sharing a Redis hear each other's notices (and their own) on
// the topic they subscribed to, not on others, and not those of a deployment with another key
// prefix.
func TestRedisNotices(t *testing.T) {
	srv := testredis.Start(t)
	a := newRedisStore(t, RedisConfig{URL: srv.URL(), KeyPrefix: "dep1:"})
	b := newRedisStore(t, RedisConfig{URL: srv.URL(), KeyPrefix: "dep1:"})
	other := newRedisStore(t, RedisConfig{URL: srv.URL(), KeyPrefix: "dep2:"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inA, inB, inOther := make(noticeInbox, 8), make(noticeInbox, 8), make(noticeInbox, 8)
	a.Subscribe(ctx, "lists", inA.fn)
	b.Subscribe(ctx, "lists", inB.fn)
	other.Subscribe(ctx, "lists", inOther.fn)
	waitSubscribers(t, a, "lists", 2)
	waitSubscribers(t, other, "lists", 1)

	if err := a.Publish(ctx, "lists", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, "elsewhere", []byte("not for lists")); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, "lists", []byte("two")); err != nil {
		t.Fatal(err)
	}
	for _, in := range []noticeInbox{inA, inB} {
		in.want(t, "one")
		in.want(t, "two") // in order, and the other topic's message was never delivered
	}
	// Each deployment's subscriber gets its own next notice first: one of the other's that had
	// leaked to it, published earlier, would have arrived before.
	if err := other.Publish(ctx, "lists", []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	inOther.want(t, "theirs")
	if err := a.Publish(ctx, "lists", []byte("ours")); err != nil {
		t.Fatal(err)
	}
	inA.want(t, "ours") // and theirs, published first, did not reach us

	cancel() // a subscription ends with its context
	waitSubscribers(t, a, "lists", 0)
}

// TestRedisNoticesSurviveRestart: with Redis gone, Publish fails as ErrUnavailable; once it is
// back, the subscription is remade by itself and notices flow again.
func TestRedisNoticesSurviveRestart(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), DialTimeout: 500 * time.Millisecond})
	ctx := context.Background()
	in := make(noticeInbox, 8)
	r.Subscribe(t.Context(), "lists", in.fn)
	waitSubscribers(t, r, "lists", 1)

	srv.Stop()
	pctx, cancel := context.WithTimeout(ctx, hangGuard)
	err := r.Publish(pctx, "lists", []byte("lost"))
	cancel()
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Publish with Redis stopped: %v, want ErrUnavailable", err)
	}

	srv.Restart()
	waitPing(t, r)
	waitSubscribers(t, r, "lists", 1)
	if err := r.Publish(ctx, "lists", []byte("after")); err != nil {
		t.Fatal(err)
	}
	in.want(t, "after")
}

// TestSubscribedFollowsARestart: Subscribed, which readiness reads, follows the subscription
// through a Redis restart, not only its first confirmation. Once Redis has gone, it says the
// subscription is lost; after Redis is back it says so until Redis has confirmed the
// subscription again, and the moment it says subscribed, a message published on the topic
// reaches the subscriber. Before, it said subscribed from the first confirmation on, so a
// replica was ready again as soon as Redis answered a PING while its notices, a pre-2026
// session's changed subscriptions or another replica's hand-over among them, were still lost.
func TestSubscribedFollowsARestart(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), DialTimeout: 500 * time.Millisecond})
	in := make(noticeInbox, 8)
	r.Subscribe(t.Context(), "lists", in.fn)
	waitSubscribed(t, r, true)

	srv.Stop()
	waitSubscribed(t, r, false)
	srv.Restart()
	waitSubscribed(t, r, true)
	if err := r.Publish(context.Background(), "lists", []byte("after")); err != nil {
		t.Fatal(err)
	}
	in.want(t, "after")
}

// TestSubscribedFollowsAHang: a notice subscription whose connection goes quiet and then does
// not answer a PING (a Redis that hangs here; a peer that vanished or a partition alike) is
// counted lost, and made again on a new connection: once Redis answers, Subscribed says so
// again and a published message is delivered. Before, only a connection that failed a read was
// noticed; one that merely stopped answering kept the replica ready while its notices were lost.
func TestSubscribedFollowsAHang(t *testing.T) {
	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL(), DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond},
		func(r *Redis) { r.noticeCheck = 20 * time.Millisecond })
	in := make(noticeInbox, 8)
	r.Subscribe(t.Context(), "lists", in.fn)
	waitSubscribed(t, r, true)

	srv.Pause()
	waitSubscribed(t, r, false)
	srv.Resume()
	waitSubscribed(t, r, true)
	if err := r.Publish(context.Background(), "lists", []byte("after")); err != nil {
		t.Fatal(err)
	}
	in.want(t, "after")
}

// waitSubscribed polls Subscribed (bounded) until it says want.
func waitSubscribed(t *testing.T, r *Redis, want bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for (r.Subscribed() == nil) != want {
		if time.Now().After(deadline) {
			t.Fatalf("Subscribed() = %v, want subscribed %v", r.Subscribed(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSubscribedMeansDelivered: Subscribed, which readiness reads, says a replica is not ready
// while Redis has not confirmed a subscription (a Redis that accepts connections and never
// answers: it stays so), and once it says so on a live Redis, a message published on the topic
// reaches the subscriber: no PUBSUB NUMSUB polling first. A subscription that ends before it
// was confirmed holds up nothing.
func TestSubscribedMeansDelivered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // read nothing, answer nothing
		}
	}()
	hung := newRedisStore(t, RedisConfig{URL: "redis://" + ln.Addr().String()})
	hctx, hcancel := context.WithCancel(context.Background())
	hung.Subscribe(hctx, "asks", func([]byte) {})
	time.Sleep(200 * time.Millisecond) // a while: it must stay unconfirmed, not become so
	if err := hung.Subscribed(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a hung Redis: Subscribed() = %v, want ErrUnavailable", err)
	}
	hcancel()
	deadline := time.Now().Add(hangGuard)
	for hung.Subscribed() != nil {
		if time.Now().After(deadline) {
			t.Fatal("a subscription that ended still holds readiness")
		}
		time.Sleep(10 * time.Millisecond)
	}

	srv := testredis.Start(t)
	r := newRedisStore(t, RedisConfig{URL: srv.URL()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for round := range 20 {
		in := make(noticeInbox, 1)
		topic := fmt.Sprintf("asks-%d", round)
		r.Subscribe(ctx, topic, in.fn)
		deadline := time.Now().Add(hangGuard)
		for r.Subscribed() != nil {
			if time.Now().After(deadline) {
				t.Fatal("never subscribed")
			}
			time.Sleep(time.Millisecond)
		}
		if err := r.Publish(ctx, topic, []byte("answer")); err != nil {
			t.Fatal(err)
		}
		in.want(t, "answer")
	}
}
