package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// Notices passes short messages between the replicas that share a Redis: what one replica
// learns that the others' local state should follow (a backend's list_changed, which drops
// every replica's cached copy of that list). Delivery is best effort: a replica that is not
// subscribed when a message is published (starting, or cut off from Redis) never gets it. A
// notice may therefore only ever shorten how long local state lives; nothing may depend on
// receiving one. The Memory store has no other replicas and does not implement it.
type Notices interface {
	// Publish sends msg to every replica subscribed to topic, the sender's own subscription
	// included.
	Publish(ctx context.Context, topic string, msg []byte) error
	// Subscribe calls fn with each message published on topic, one at a time, until ctx ends.
	// It returns at once: the subscription is made, and remade after every failure, in the
	// background.
	Subscribe(ctx context.Context, topic string, fn func(msg []byte))
}

var _ Notices = (*Redis)(nil)

// noticeChannel is the Redis channel of a topic. Channels are not keys (a Cluster broadcasts
// them to every node), but the prefix still keeps deployments that share a Redis apart.
func (r *Redis) noticeChannel(topic string) string { return r.prefix + "notice:" + topic }

// Publish implements Notices with PUBLISH.
func (r *Redis) Publish(ctx context.Context, topic string, msg []byte) error {
	probe, err := r.admit()
	if err != nil {
		return err
	}
	return r.done(probe, r.client.Publish(ctx, r.noticeChannel(topic), msg).Err())
}

// Subscribe implements Notices with SUBSCRIBE. go-redis keeps the subscription: it reconnects
// and subscribes again when its connection fails. Its first SUBSCRIBE waits for Redis (up to the
// dial and read timeouts, per attempt), so it is made in the background too: a hung Redis must
// not hold up the start of a configuration, at start-up or on a reload. Until Redis confirms it,
// and again from the moment its connection fails until Redis confirms it anew, what is published
// on topic does not reach this replica: Subscribed says so, for readiness.
func (r *Redis) Subscribe(ctx context.Context, topic string, fn func(msg []byte)) {
	r.unconfirmed.Add(1)
	go func() {
		sub := subscription{r: r, channel: r.noticeChannel(topic), fn: fn}
		// A subscription that ends unconfirmed holds up nothing any more.
		defer sub.confirm()
		for sub.receive(ctx) {
			// A ping went unanswered: the connection is gone without a word (a peer that
			// vanished, a partition) or Redis hangs; a new one is made.
		}
	}()
}

// receive subscribes on a connection of its own and passes on what arrives until ctx ends or
// the store is closed (false), or a PING on a quiet connection goes unanswered (true: the caller
// subscribes again). A connection that fails is made again by go-redis on the next receive.
func (s *subscription) receive(ctx context.Context) (again bool) {
	ps := s.r.client.Subscribe(ctx, s.channel)
	defer ps.Close()
	// A receive waits on the connection, not on ctx: closing ends it when ctx ends.
	defer context.AfterFunc(ctx, func() { _ = ps.Close() })()
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, s.r.noticeCheck)
		switch {
		case ctx.Err() != nil || errors.Is(err, redis.ErrClosed):
			return false
		case err == nil:
			pinged = false
		case quiet(err) && pinged:
			s.lost()
			return true
		case quiet(err) && ps.Ping(ctx) == nil:
			pinged = true // its pong, or anything else, comes next
			continue
		default:
			// The connection failed (Redis restarted, went away, or cut it): go-redis connects
			// and subscribes again on the next receive, and until Redis confirms that,
			// messages published on the channel are lost to this replica.
			s.lost()
			select {
			case <-ctx.Done():
				return false
			case <-time.After(noticeRetryEvery):
			}
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				s.confirm()
			}
		case *redis.Message:
			s.fn([]byte(m.Payload))
		}
	}
}

const (
	// noticeCheckEvery is how long a notice subscription's connection may stay quiet before a
	// PING checks it, and then how long the PING may go unanswered before the connection is
	// given up (a connection whose peer vanished without closing it never fails a read).
	noticeCheckEvery = 3 * time.Second
	// noticeRetryEvery paces a notice subscription's reconnects while Redis is away.
	noticeRetryEvery = 100 * time.Millisecond
)

// subscription is one notice subscription's standing in Redis.unconfirmed: counted there while
// Redis has not confirmed it since it was made or since its connection last failed.
type subscription struct {
	r         *Redis
	channel   string
	fn        func(msg []byte)
	confirmed bool
}

func (s *subscription) confirm() {
	if !s.confirmed {
		s.confirmed = true
		s.r.unconfirmed.Add(-1)
	}
}

func (s *subscription) lost() {
	if s.confirmed {
		s.confirmed = false
		s.r.unconfirmed.Add(1)
	}
}

// quiet reports whether err is a read that timed out: nothing was published meanwhile, which
// says nothing about the connection yet.
func quiet(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Subscribed returns nil when Redis has confirmed every notice subscription made so far, and
// has confirmed it again since its connection last failed; else an error wrapping
// ErrUnavailable: messages published meanwhile on its topic are lost to this replica (a
// pre-2026 client's answer that another replica hands over, say), so it is not ready for
// traffic yet.
func (r *Redis) Subscribed() error {
	if n := r.unconfirmed.Load(); n > 0 {
		return fmt.Errorf("%w: notice subscriptions not yet confirmed by Redis: %d", ErrUnavailable, n)
	}
	return nil
}

// subscribers is what PUBSUB NUMSUB says of a topic's channel (tests).
func (r *Redis) subscribers(ctx context.Context, topic string) (int64, error) {
	ch := r.noticeChannel(topic)
	n, err := r.client.PubSubNumSub(ctx, ch).Result()
	return n[ch], r.wrap(err)
}
