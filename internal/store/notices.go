package store

import (
	"context"
	"fmt"

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

// Subscribe implements Notices with SUBSCRIBE. go-redis keeps the subscription: it pings the
// connection, and reconnects and subscribes again when it fails. Its first SUBSCRIBE waits for
// Redis (up to the dial and read timeouts, per attempt), so it is made in the background too:
// a hung Redis must not hold up the start of a configuration, at start-up or on a reload. Until
// Redis confirms it the first time, what is published on topic does not reach this replica:
// Subscribed says so, for readiness.
func (r *Redis) Subscribe(ctx context.Context, topic string, fn func(msg []byte)) {
	r.unconfirmed.Add(1)
	go func() {
		confirmed := false
		confirm := func() {
			if !confirmed {
				confirmed = true
				r.unconfirmed.Add(-1)
			}
		}
		// A subscription that ends unconfirmed holds up nothing any more.
		defer confirm()
		ps := r.client.Subscribe(ctx, r.noticeChannel(topic))
		ch := ps.ChannelWithSubscriptions()
		defer ps.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-ch:
				if !ok {
					return // the store was closed
				}
				switch m := m.(type) {
				case *redis.Subscription:
					if m.Kind == "subscribe" {
						confirm()
					}
				case *redis.Message:
					fn([]byte(m.Payload))
				}
			}
		}
	}()
}

// Subscribed returns nil when Redis has confirmed every notice subscription made so far at
// least once, and an error wrapping ErrUnavailable while one is still being made: messages
// published meanwhile on its topic are lost to this replica (a pre-2026 client's answer that
// another replica hands over, say), so it is not ready for traffic yet. A subscription lost
// later is made again by go-redis in the background; Ping tells of Redis being away.
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
